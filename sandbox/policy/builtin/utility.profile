# utility.profile: a worker that transforms data it is handed and keeps
# nothing. The format is described in docs/policies.md.

[profile]
description=Data transformer: no files; input and output through its descriptors
seccomp=utility.policy
# Required wherever it runs: the seccomp layers and the broker. Without
# user namespaces or Landlock (some kernels, containers, distributions)
# it runs with a warning, and its status report shows them off.
require=seccomp;broker

[broker]
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
cpu=300
core=0
nofile=32
memlock=64K
msgqueue=0

[worker]
status=false
