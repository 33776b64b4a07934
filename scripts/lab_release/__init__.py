"""`make run-lab` (scripts/run_lab.py): check the release fits, install it, wait for it, run the
tester Job, copy reports. One module per step; `main` runs them in order.

Settings come from the Makefile as environment variables (see `cluster.Settings`). The steps:
1. Preflight (preflight.py, on quantities.py, demand.py, profiles.py): the release's summed requests
   against the nodes' allocatable CPU and memory minus what other pods already request there.
   Without -f/--values in HELM_ARGS, the largest profile that fits is picked (values files whose
   `fits.autoPick` is true) and named; with them, a release that does not fit is refused with the
   values file that would.
2. `helm upgrade --install` (install.py) with each image's content tag (--set-string), a fresh
   tester Job.
3. Wait (waiting.py), showing pods ready x/y, for every Deployment to be rolled out and the tester's
   pod to run; on a timeout, each waiting pod's reason. Where Grafana's image cannot be pulled, the
   lab is installed without it, and that is said in one line (main.py).
4. Follow the tester's log (tester_job.py; its summary ends it), poll the Job until it ends or its
   activeDeadlineSeconds passes, copy the reports out (reports.py; an app lab's proposal named with
   the command that proves it), exit 0 only if the Job completed.
Ctrl-C at any step stops every process this started.
"""
