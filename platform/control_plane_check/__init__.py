"""`make cluster-check` (platform/cluster_check.py): the chart on a real Kubernetes control plane
with simulated nodes.

Starts etcd, kube-apiserver, kube-scheduler and kube-controller-manager (built by
platform/build-kubernetes) and kwok, all on 127.0.0.1 only; no container runs (control_plane.py,
processes.py). Then:
- one kwok node per node size the values files claim (`fits`), each carrying a pod that stands
  for kind's own control plane, and a namespace per values file enforcing the restricted Pod
  Security standard (admission is shown to refuse a privilege-escalating pod) (nodes.py);
- every values file the chart offers (profiles.py): preflight (run-lab's own) accepts it on the
  node size it claims with every other node cordoned, `helm upgrade --install` is accepted, every
  object is in the API, every Deployment rolls out and every pod (the tester Job's too) is scheduled
  on that node; 0 Pending, and the requests on the node are the rendered sum. The results claim is
  bound to a PersistentVolume made here, as kind's provisioner would; on the 2-CPU node a rebuilt
  image rolls only its own pods (upgrade.py);
- `make run-lab` (scripts/run_lab.py) with the defaults on the 4-CPU node: refused by the
  preflight, which names ci/small-values.yaml, and nothing installed; without -f on the 2-CPU
  node it picks ci/two-cpu-values.yaml (preflight.py).
Everything it started is stopped on success, failure, Ctrl-C or SIGTERM (and, should this process
die, by the kernel: each child has a parent-death signal). Logs: build/cluster-check/.
"""
