# renderer.profile: a worker that parses and lays out untrusted documents.
# The format is described in docs/policies.md.

[profile]
description=Document renderer: reads fonts, shared data and libraries through the broker
seccomp=renderer.policy
# Required wherever it runs: the seccomp layers and the broker. Without
# user namespaces or Landlock (some kernels, containers, distributions)
# it runs with a warning, and its status report shows them off.
require=seccomp;broker

[broker]
# Libraries for dlopen (the loader reads its cache first), shared data.
# The host adds the worker's home and its input directory at run time.
# "direct,": with Landlock the worker opens the libraries itself, read
# only (docs/design.md, "Direct opens").
rules=read /etc/ld.so.cache;direct,read /usr/lib/x86_64-linux-gnu/;read /usr/share/common-licenses/;stat-intermediate /usr/lib/x86_64-linux-gnu/
# Fonts as fontconfig, pango and cairo find them (docs/policies.md,
# "Permission sets").
include=fonts
umask=077
denied-errno=EACCES

[namespaces]
enter=user;pid;net;ipc;uts;mount;cgroup
empty-root=true

[landlock]
enabled=true

[rlimits]
# docs/policies.md explains each limit and why it is set this way.
as=2G
core=0
nofile=128
fsize=64M
memlock=64K
msgqueue=0

[worker]
status=true
