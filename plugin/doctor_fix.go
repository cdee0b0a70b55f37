package plugin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/extract"
)

// settleInterval is how often doctor --fix reads the cluster while it
// waits for the package manager to take a repair in.
const settleInterval = 2 * time.Second

// fix plans the repair, prints it, confirms it, saves what it changes,
// makes it and reports again.
func (o *DoctorOptions) fix(ctx context.Context, d *action.Doctor) error {
	rep, err := d.PlanRepair(ctx)
	if err != nil {
		return err
	}
	if len(rep.Repair.Steps) == 0 || o.DryRun == dryRunClient {
		if err := o.print(rep); err != nil {
			return err
		}
		return doctorStatus(rep)
	}
	if err := o.printPlan(rep); err != nil {
		return err
	}
	if !o.confirm(len(rep.Repair.Steps)) {
		return errors.New("repair cancelled: nothing was changed")
	}
	if err := o.backup(ctx, d, rep); err != nil {
		return err
	}
	return o.repair(ctx, d, rep)
}

// printPlan shows the repair before it is made: on stderr when -o keeps
// stdout for the final report.
func (o *DoctorOptions) printPlan(rep *action.Report) error {
	w := o.results()
	if err := writeReport(w, rep); err != nil {
		return err
	}
	return writeRepair(w, rep.Repair)
}

// results is where what the repair does is said: stdout, unless -o
// keeps it for the final report.
func (o *DoctorOptions) results() io.Writer {
	if o.Output != "" {
		return o.root.IOStreams.ErrOut
	}
	return o.root.IOStreams.Out
}

// confirm asks on a terminal, unless --yes or a dry run.
func (o *DoctorOptions) confirm(steps int) bool {
	in, ok := o.root.IOStreams.In.(*os.File)
	if o.Yes || o.DryRun != dryRunNone || !ok || !term.IsTerminal(int(in.Fd())) {
		return true
	}
	fmt.Fprintf(o.root.IOStreams.ErrOut, "Make the %d repair step(s) doctor planned? [y/N] ", steps)
	answer, _ := bufio.NewReader(in).ReadString('\n')
	answer = strings.ToLower(strings.TrimSpace(answer))
	return answer == "y" || answer == "yes"
}

// backup saves every object the repair changes to a new file, written
// whole or not at all, before anything is changed. It never replaces
// anything: an earlier backup, a kubeconfig, a device. A server dry run
// changes nothing and saves nothing.
func (o *DoctorOptions) backup(ctx context.Context, d *action.Doctor, rep *action.Report) error {
	if o.DryRun == dryRunServer {
		return nil
	}
	path := o.Backup
	if path == "" {
		path = "doctor-backup-" + time.Now().UTC().Format("20060102T150405Z") + ".yaml"
	}
	f, err := extract.CreateNewFile(path)
	if err != nil {
		return backupError(path, err)
	}
	defer f.Abort()
	objs, err := d.Backup(ctx, rep)
	if err == nil {
		err = writeBackup(f, objs)
	}
	if err == nil {
		err = f.Commit()
	}
	if err != nil {
		return backupError(path, err)
	}
	rep.Repair.Backup = path
	fmt.Fprintf(o.root.IOStreams.ErrOut, "Saved the %d object(s) the repair changes to %s (kubectl apply -f %s puts them back)\n", len(objs), path, path)
	return nil
}

// repair makes the steps, then waits for the package manager and reports
// again, exiting by that report.
func (o *DoctorOptions) repair(ctx context.Context, d *action.Doctor, rep *action.Report) error {
	out, suffix := o.results(), ""
	if o.DryRun == dryRunServer {
		suffix = " (server dry run)"
	}
	err := d.Repair(ctx, rep, action.RepairOptions{DryRun: o.DryRun == dryRunServer, Wait: o.Wait, Interval: settleInterval,
		Done: func(st diagnose.RepairStep) { fmt.Fprintf(out, "%s%s\n", st.Done(), suffix) }})
	for _, n := range rep.Repair.Notes {
		fmt.Fprintf(out, "Note: %s\n", n)
	}
	if err != nil || o.DryRun == dryRunServer {
		return err
	}
	fmt.Fprintf(o.root.IOStreams.ErrOut, "Waiting up to %s for the package manager to take the repair in\n", o.Wait)
	after, err := d.Settle(ctx, o.Wait, settleInterval)
	if err != nil {
		return err
	}
	if o.Output == "" {
		fmt.Fprintln(out, "After the repair:")
		err = writeReport(out, after)
	} else {
		after.Repair = rep.Repair
		err = o.print(after)
	}
	if err != nil {
		return err
	}
	return doctorStatus(after)
}

// checkBackup refuses a --backup that names anything already there,
// before doctor reads or changes anything (backup checks again as it
// writes, and never replaces what appeared meanwhile).
func checkBackup(path string) error {
	if path == "" {
		return nil
	}
	if err := extract.CheckNew(path); err != nil {
		return backupError(path, err)
	}
	return nil
}

// backupError says why the backup could not be written; a path already
// taken is a usage error that names the way out.
func backupError(path string, err error) error {
	var taken *extract.ExistsError
	if errors.As(err, &taken) {
		return &exit.UsageError{Err: fmt.Errorf("the backup file %s exists already (%s): a backup never replaces anything; name a new file with --backup, or move it away; nothing was changed", path, taken.What)}
	}
	return fmt.Errorf("write the backup %s: %w; nothing was changed", path, err)
}
