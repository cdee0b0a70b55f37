@echo off
rem kubectl (1.26 and later) runs kubectl_complete-xpkg to complete `kubectl xpkg` arguments.
kubectl-xpkg.exe __complete %*
