package crossplane

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// deploymentStandIn does the one thing of a kubelet and the Deployment
// controller that Crossplane's package manager waits for: it marks every
// Deployment in a namespace Available, through the status subresource.
// Without it, providers and functions stay Healthy=False ("deployment has no
// condition of type Available"), since no pod ever runs here.
type deploymentStandIn struct {
	cancel context.CancelFunc
	done   sync.WaitGroup
	mu     sync.Mutex
	// patched counts the status updates made, for tests of the stand-in.
	patched int
}

func startDeploymentStandIn(ctx context.Context, cancel context.CancelFunc, kube kubernetes.Interface, ns string) *deploymentStandIn {
	s := &deploymentStandIn{cancel: cancel}
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(ns))
	informer := factory.Apps().V1().Deployments().Informer()
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	enqueue := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			queue.Add(key)
		}
	}
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
	factory.Start(ctx.Done())
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		<-ctx.Done()
		queue.ShutDown()
		factory.Shutdown()
	}()
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		for s.next(ctx, kube, informer.GetIndexer(), queue) {
		}
	}()
	return s
}

// next handles one queued Deployment; false once the queue is shut down.
func (s *deploymentStandIn) next(ctx context.Context, kube kubernetes.Interface, idx cache.Indexer, queue workqueue.TypedRateLimitingInterface[string]) bool {
	key, shutdown := queue.Get()
	if shutdown {
		return false
	}
	defer queue.Done(key)
	obj, exists, err := idx.GetByKey(key)
	if err != nil || !exists {
		queue.Forget(key)
		return true
	}
	d := obj.(*appsv1.Deployment)
	if available(d) {
		queue.Forget(key)
		return true
	}
	err = s.markAvailable(ctx, kube, d.DeepCopy())
	switch {
	case err == nil || apierrors.IsNotFound(err):
		queue.Forget(key)
	case ctx.Err() == nil:
		queue.AddRateLimited(key) // a conflict: the informer brings the newer one
	}
	return true
}

// available reports whether d's status already says what markAvailable
// would write, so that the stand-in's own update does not loop.
func available(d *appsv1.Deployment) bool {
	if d.Status.ObservedGeneration != d.Generation {
		return false
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (s *deploymentStandIn) markAvailable(ctx context.Context, kube kubernetes.Interface, d *appsv1.Deployment) error {
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	now := metav1.NewTime(time.Now())
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation,
		Replicas:           replicas, UpdatedReplicas: replicas,
		ReadyReplicas: replicas, AvailableReplicas: replicas,
		Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue,
			Reason: "MinimumReplicasAvailable", Message: "Marked available by the test harness: nothing runs pods here.",
			LastUpdateTime: now, LastTransitionTime: now,
		}, {
			Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue,
			Reason: "NewReplicaSetAvailable", Message: "Marked by the test harness.",
			LastUpdateTime: now, LastTransitionTime: now,
		}},
	}
	if _, err := kube.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("mark deployment %s/%s available: %w", d.Namespace, d.Name, err)
	}
	s.mu.Lock()
	s.patched++
	s.mu.Unlock()
	return nil
}

func (s *deploymentStandIn) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.patched
}

func (s *deploymentStandIn) stop() {
	s.cancel()
	s.done.Wait()
}
