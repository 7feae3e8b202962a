# baseline.profile: a generic worker that computes on what it is handed and
# opens nothing. The format is described in docs/policies.md.

[profile]
description=Generic worker: every layer, no file access at all
seccomp=baseline.policy
# Required wherever it runs: the seccomp layers and the broker. Without
# user namespaces or Landlock (some kernels, containers, distributions)
# it runs with a warning, and its status report shows them off.
require=seccomp;broker

[broker]
# No rules: every file request is refused (EACCES), and audited.
rules=

[namespaces]
enter=user;pid;net;ipc;uts;mount;cgroup
empty-root=true

[landlock]
enabled=true

[rlimits]
# docs/policies.md explains each limit and why it is set this way.
as=1G
fsize=1G
core=0
nofile=64
memlock=64K
msgqueue=0

[worker]
status=false
