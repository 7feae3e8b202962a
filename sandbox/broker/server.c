/* The broker's request loop; see server.h.
 *
 * Trusts the control channel and the allowlists. Trusts no byte, length or
 * descriptor that arrives on a worker channel: each is checked before use,
 * and every descriptor received is closed on every path.
 */
#include "sandbox/broker/server.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sandbox/base/syscalls.h"
#include "sandbox/broker/commands.h"
#include "sandbox/broker/protocol.h"
#include "sandbox/broker/verdicts.h"
#include "sandbox/files/resolver.h"
#include "sandbox/policy/arg_rules.h"

/* Descriptors accepted per datagram before the message is refused: a
 * correct client sends one; room for a few more lets the broker see (and
 * close) what a hostile one sent instead of losing them to MSG_CTRUNC. */
#define MAX_FDS_PER_MESSAGE 8

/* Thread channels one worker channel may attach (B7): the client's pool,
 * twice over for a forked child that attaches its own. */
#define MAX_THREAD_CHANNELS_PER_ORIGIN 32

/* The broker's send buffer on a thread channel: room for a few replies a
 * client has not read yet, so one that never reads holds little (B7). */
#define THREAD_CHANNEL_SNDBUF 16384

/* Readiness events taken per epoll_wait. The channels reported go to
 * their worker's queue; a turn then serves one request of each worker
 * with a ready channel, and the next epoll_wait (which does not sleep
 * while a worker still has one queued) picks up what arrived meanwhile.
 * Level-triggered: a channel not reported in this batch, or one that
 * still holds a request after its turn, is reported again. */
#define EVENTS_PER_WAIT 64

/* After serving, the loop polls for the next request for this long
 * before it sleeps (yielding its CPU between polls). A worker usually
 * asks again within microseconds (a library's next open); a broker asleep
 * by then is woken by an interrupt to its CPU, which on a virtual machine
 * whose idle vCPUs halt costs tens of microseconds, more than serving the
 * request. Polling costs at most this much CPU time per burst of
 * requests, and none while no worker asks. */
#define LINGER_US 50

/* epoll_event.data of the control channel; channels carry their serial
 * number, which starts at 1. */
#define CONTROL_KEY 0

/* What the channels of one worker share: the budget of its denial lines
 * (audit.h), the allowlist of a worker with rules of its own, and the
 * queue of its channels that hold a request (its turn in the round-robin).
 * Kept while any of its channels is open. */
typedef struct {
  uint64_t origin; /* the key */
  size_t n_channels;
  size_t n_threads; /* of which thread channels */
  sbx_audit_budget budget;
  sbx_allowlist *own_list; /* the type's entries, then the worker's */
  sbx_resolver *own;       /* on own_list; NULL: the type's resolver */
  GQueue ready;            /* channel *, readable, in the order reported */
  GList ring_link;         /* in the server's ring while ready is not empty */
  bool in_ring;
  bool listener_taken; /* its LISTENER came (once per worker) */
} origin_state;

typedef struct {
  int fd;
  size_t type;
  /* The type's, or the worker's own (origin_state.own): borrowed. */
  const sbx_resolver *resolver;
  bool watched;    /* registered with the epoll set */
  bool thread;     /* kept by ATTACH: replies go back on it */
  bool queued;     /* in its worker's ready queue */
  uint64_t origin; /* the worker channel it belongs to (itself if not) */
  uint64_t key;    /* serial number, the epoll key: never reused */
  origin_state *o; /* its worker's; lives as long as the channel */
  GList ready_link;
  /* Not a channel but the worker's seccomp listener (verdicts.h), whose
   * descriptor fd is; owned. */
  sbx_verdict_listener *listener;
} channel;

static void origin_free(gpointer p) {
  origin_state *o = p;
  sbx_resolver_free(o->own);
  sbx_allowlist_free(o->own_list);
  g_free(o);
}

/* No `suppressed` line is owed. */
#define NOTHING_DUE INT64_MAX

struct sbx_broker_server {
  sbx_audit *audit;
  GPtrArray *resolvers; /* sbx_resolver *, indexed by type */
  GHashTable *channels; /* &channel.key -> channel *, owned */
  size_t n_workers;     /* open worker channels */
  GQueue ring;          /* origin_state * with a ready channel, in turn */
  int epoll_fd;         /* -1 until the loop runs */
  uint64_t next_key;
  unsigned char *request;
  unsigned char *payload;
  sbx_broker_stats stats;
  uint64_t next_origin;
  size_t n_threads;        /* open thread channels */
  size_t thread_budget;    /* at most this many: half the descriptor limit */
  GHashTable *origins;     /* &origin_state.origin -> origin_state */
  int64_t next_summary_ms; /* earliest `suppressed` line due, or NOTHING_DUE */
  int64_t audit_retry_ms;  /* when to retry a sink that owes lines */
  int64_t linger_until_us; /* poll instead of sleeping until then */
  /* Per type: the seccomp layer whose errno verdicts its workers report
   * (verdicts.h), or NULL; borrowed. */
  GPtrArray *verdict_programs;
  sbx_unotify_buffers notif; /* sized once any type has one */
  /* Learning (sbx_broker_server_set_learning): what each type was refused
   * and given all the same. NULL when not learning. */
  sbx_resolver *learn_resolver;
  GPtrArray *learned_rules; /* per type: GHashTable of rule texts */
  /* per type: GHashTable, system call number + 1 -> sbx_arg_seen[6] */
  GPtrArray *learned_calls;
};

typedef union {
  char buf[CMSG_SPACE(sizeof(struct ucred)) +
           CMSG_SPACE(MAX_FDS_PER_MESSAGE * sizeof(int))];
  struct cmsghdr align;
} control_buf;

typedef struct {
  int fds[MAX_FDS_PER_MESSAGE];
  size_t n_fds;
  size_t n_rights_blocks;
  bool other_cmsg;
  bool have_cred;
  struct ucred cred;
} ancillary;

static void resolver_free_cb(gpointer p) {
  sbx_resolver_free(p);
}

static int64_t now_ms(void) {
  return g_get_monotonic_time() / 1000;
}

static bool audit_on(const sbx_broker_server *s) {
  return s->audit && s->audit->fd >= 0;
}

sbx_broker_server *sbx_broker_server_new(sbx_audit *audit) {
  sbx_broker_server *s = g_new0(sbx_broker_server, 1);
  s->audit = audit;
  s->origins =
      g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, origin_free);
  s->next_summary_ms = NOTHING_DUE;
  s->resolvers = g_ptr_array_new_with_free_func(resolver_free_cb);
  s->channels =
      g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
  g_queue_init(&s->ring);
  s->verdict_programs = g_ptr_array_new();
  s->request = g_malloc(SBX_BROKER_MAX_REQUEST + 1);
  s->payload = g_malloc0(SBX_BROKER_MAX_PAYLOAD);
  s->epoll_fd = -1;
  /* Thread channels may use half of the descriptors; the rest stay for
   * worker channels, roots and the files being handed out (F4). */
  struct rlimit lim;
  s->thread_budget =
      getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY
          ? (size_t)lim.rlim_cur / 2
          : 512;
  return s;
}

gboolean sbx_broker_server_add_type(sbx_broker_server *s,
                                    const sbx_allowlist *list, GError **error) {
  sbx_resolver *r = sbx_resolver_new(list, error);
  if (!r)
    return FALSE;
  g_ptr_array_add(s->resolvers, r);
  g_ptr_array_add(s->verdict_programs, NULL);
  if (s->learned_rules) {
    g_ptr_array_add(
        s->learned_rules,
        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL));
    g_ptr_array_add(s->learned_calls,
                    g_hash_table_new_full(NULL, NULL, NULL, g_free));
  }
  return TRUE;
}

gboolean sbx_broker_server_set_learning(sbx_broker_server *s,
                                        const sbx_allowlist *everything,
                                        GError **error) {
  if (s->resolvers->len) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "learning is set before the types are added");
    return FALSE;
  }
  s->learn_resolver = sbx_resolver_new(everything, error);
  if (!s->learn_resolver)
    return FALSE;
  s->learned_rules =
      g_ptr_array_new_with_free_func((GDestroyNotify)g_hash_table_unref);
  s->learned_calls =
      g_ptr_array_new_with_free_func((GDestroyNotify)g_hash_table_unref);
  return TRUE;
}

static gint compare_strings(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int sbx_broker_server_write_learned(sbx_broker_server *s, int fd) {
  GVariantBuilder all;
  g_variant_builder_init(&all, G_VARIANT_TYPE(SBX_BROKER_LEARNED_TYPE));
  for (guint t = 0; s->learned_rules && t < s->resolvers->len; t++) {
    const sbx_resolver *r = g_ptr_array_index(s->resolvers, t);
    guint n = 0;
    g_autofree gpointer *rules = g_hash_table_get_keys_as_array(
        g_ptr_array_index(s->learned_rules, t), &n);
    qsort(rules, n, sizeof *rules, compare_strings);
    GVariantBuilder calls;
    g_variant_builder_init(&calls, G_VARIANT_TYPE("a(ia(batt))"));
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, g_ptr_array_index(s->learned_calls, t));
    while (g_hash_table_iter_next(&it, &key, &value)) {
      const sbx_arg_seen *args = value;
      GVariantBuilder seen;
      g_variant_builder_init(&seen, G_VARIANT_TYPE("a(batt)"));
      for (int i = 0; i < 6; i++)
        g_variant_builder_add_value(
            &seen, g_variant_new("(b@att)", (gboolean)args[i].overflow,
                                 g_variant_new_fixed_array(
                                     G_VARIANT_TYPE_UINT64, args[i].values,
                                     args[i].n_values, sizeof(guint64)),
                                 (guint64)args[i].mask));
      g_variant_builder_add(&calls, "(ia(batt))", GPOINTER_TO_INT(key) - 1,
                            &seen);
    }
    g_variant_builder_add(&all, "(s^asa(ia(batt)))",
                          sbx_allowlist_name(sbx_resolver_allowlist(r)),
                          (char **)rules, &calls);
  }
  g_autoptr(GVariant) v = g_variant_ref_sink(g_variant_builder_end(&all));
  const char *data = g_variant_get_data(v);
  size_t len = g_variant_get_size(v), off = 0;
  while (off < len) {
    ssize_t w = write(fd, data + off, len - off); /* a fresh memory file */
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return w < 0 ? -errno : -EIO;
    off += (size_t)w;
  }
  return (int)MIN(len, (size_t)INT_MAX);
}

/* Learning: a request the type's rules refused is decided again under
 * `everything`; when that grants it, the rule that would have granted it
 * is kept for the type and the worker gets what it asked for. */
static int learn_instead(sbx_broker_server *s, const channel *ch,
                         sbx_broker_call *call, int refused) {
  if (!s->learn_resolver || call->decision.granted || !call->decision.allow[0])
    return refused;
  g_autofree char *rule = g_strdup(call->decision.allow);
  call->resolver = s->learn_resolver;
  call->fd = -1;
  call->payload_len = 0;
  call->decision = (sbx_decision){.granted = false, .reason = "no decision"};
  int result = sbx_broker_command_run(call);
  if (call->decision.granted)
    g_hash_table_add(g_ptr_array_index(s->learned_rules, ch->type),
                     g_steal_pointer(&rule));
  return result;
}

gboolean sbx_broker_server_set_verdicts(sbx_broker_server *s, size_t type,
                                        const sbx_bpf_program *program,
                                        GError **error) {
  if (type >= s->verdict_programs->len) {
    g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_INVALID_PROGRAM,
                "verdict program for type %zu of %u", type,
                s->verdict_programs->len);
    return FALSE;
  }
  if (!s->notif.req && !sbx_unotify_buffers_init(&s->notif, error))
    return FALSE;
  g_ptr_array_index(s->verdict_programs, type) = (gpointer)program;
  return TRUE;
}

/* The worker's state, made on its first channel; counts no channel. */
static origin_state *origin_for(sbx_broker_server *s, uint64_t origin,
                                size_t type) {
  origin_state *o = g_hash_table_lookup(s->origins, &origin);
  if (!o) {
    o = g_new0(origin_state, 1);
    o->origin = origin;
    g_queue_init(&o->ready);
    o->ring_link.data = o;
    const sbx_resolver *r = g_ptr_array_index(s->resolvers, type);
    sbx_audit_budget_init(&o->budget,
                          sbx_allowlist_name(sbx_resolver_allowlist(r)),
                          audit_on(s) ? now_ms() : 0);
    g_hash_table_insert(s->origins, &o->origin, o);
  }
  return o;
}

/* The worker's last channel is gone: its count of suppressed denials is
 * written now, budget or not (one line per worker). */
static void leave_origin(sbx_broker_server *s, origin_state *o) {
  if (--o->n_channels > 0)
    return;
  if (audit_on(s))
    sbx_audit_budget_flush(s->audit, &o->budget, now_ms(), true);
  if (o->in_ring)
    g_queue_unlink(&s->ring, &o->ring_link);
  uint64_t origin = o->origin;
  g_hash_table_remove(s->origins, &origin);
}

static bool watch(int epoll_fd, int fd, uint64_t key) {
  struct epoll_event ev = {.events = EPOLLIN, .data.u64 = key};
  return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) == 0;
}

static void close_channel(sbx_broker_server *s, channel *ch) {
  /* Removed by hand: a client may hold another reference to the same
   * socket, and the epoll set would keep it past close(). */
  if (ch->watched)
    epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, ch->fd, NULL);
  if (ch->listener)
    sbx_verdict_listener_free(ch->listener); /* closes fd */
  else
    close(ch->fd);
  origin_state *o = ch->o;
  if (ch->queued) {
    g_queue_unlink(&o->ready, &ch->ready_link);
    if (g_queue_is_empty(&o->ready) && o->in_ring) {
      g_queue_unlink(&s->ring, &o->ring_link);
      o->in_ring = false;
    }
  }
  if (ch->thread) {
    s->n_threads--;
    o->n_threads--;
  } else {
    s->n_workers--;
  }
  leave_origin(s, o);
  uint64_t key = ch->key;
  g_hash_table_remove(s->channels, &key); /* frees ch */
}

/* A channel the kernel will not watch (epoll's per-user limit) is closed,
 * as its client would otherwise wait for an answer that never comes. */
static void watch_channel(sbx_broker_server *s, channel *ch) {
  if (watch(s->epoll_fd, ch->fd, ch->key)) {
    ch->watched = true;
  } else {
    s->stats.dropped++;
    close_channel(s, ch);
  }
}

static channel *append_channel(sbx_broker_server *s, int fd, size_t type,
                               bool thread, uint64_t origin) {
  origin_state *o = origin_for(s, origin, type);
  o->n_channels++;
  channel *ch = g_new0(channel, 1);
  *ch = (channel){
      .fd = fd,
      .type = type,
      .resolver = o->own ? o->own : g_ptr_array_index(s->resolvers, type),
      .thread = thread,
      .origin = origin,
      .key = ++s->next_key,
      .o = o};
  ch->ready_link.data = ch;
  g_hash_table_insert(s->channels, &ch->key, ch);
  if (thread) {
    s->n_threads++;
    o->n_threads++;
  } else {
    s->n_workers++;
  }
  /* Before the loop runs, sbx_broker_server_run watches them all. */
  if (s->epoll_fd >= 0 && !watch(s->epoll_fd, ch->fd, ch->key)) {
    s->stats.dropped++;
    close_channel(s, ch);
    return NULL;
  }
  ch->watched = s->epoll_fd >= 0;
  return ch;
}

/* A worker channel's socket is usable: closes fd when it is not. */
static gboolean check_channel(sbx_broker_server *s, int fd, size_t type_index,
                              GError **error) {
  if (type_index >= s->resolvers->len) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "broker channel for unknown worker type %zu (%u known)",
                type_index, s->resolvers->len);
    close(fd);
    return FALSE;
  }
  int type = 0;
  socklen_t tlen = sizeof(type);
  int one = 1;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) < 0 ||
      type != SOCK_SEQPACKET) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "broker channel (fd %d) is not a SOCK_SEQPACKET socket", fd);
    close(fd);
    return FALSE;
  }
  /* The kernel then attaches the sender's credentials to every request:
   * its pid is what /proc/self means. */
  if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0) {
    int err = errno;
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "setsockopt(SO_PASSCRED) on broker channel fd %d: %s", fd,
                g_strerror(err));
    close(fd);
    return FALSE;
  }
  return TRUE;
}

gboolean sbx_broker_server_add_channel(sbx_broker_server *s, int fd,
                                       size_t type_index, GError **error) {
  if (!check_channel(s, fd, type_index, error))
    return FALSE;
  append_channel(s, fd, type_index, false, ++s->next_origin);
  s->stats.channels++;
  return TRUE;
}

/* Every grant lies under a grantable entry of the type's list. */
static gboolean grants_within(const sbx_allowlist *type_list,
                              const sbx_allowlist *grants, GError **error) {
  for (size_t i = 0; i < sbx_allowlist_n_entries(grants); i++) {
    const sbx_allow_entry *e = sbx_allowlist_entry(grants, i);
    if ((e->rights & SBX_PERM_GRANTABLE) ||
        !sbx_allowlist_grant_ceiling(type_list, e)) {
      g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                  "worker type '%s' has no grantable entry for %s",
                  sbx_allowlist_name(type_list), e->written);
      return FALSE;
    }
  }
  return TRUE;
}

gboolean sbx_broker_server_add_channel_with_grants(sbx_broker_server *s, int fd,
                                                   size_t type_index,
                                                   sbx_allowlist *grants,
                                                   GError **error) {
  if (!check_channel(s, fd, type_index, error)) {
    sbx_allowlist_free(grants);
    return FALSE;
  }
  const sbx_allowlist *type_list =
      sbx_resolver_allowlist(g_ptr_array_index(s->resolvers, type_index));
  if (!grants_within(type_list, grants, error)) {
    sbx_allowlist_free(grants);
    close(fd);
    return FALSE;
  }
  sbx_allowlist *merged = sbx_allowlist_merged(type_list, grants);
  sbx_allowlist_free(grants);
  sbx_resolver *own = sbx_resolver_new(merged, error);
  if (!own) {
    sbx_allowlist_free(merged);
    close(fd);
    return FALSE;
  }
  uint64_t origin = ++s->next_origin;
  origin_state *o = origin_for(s, origin, type_index);
  o->own_list = merged;
  o->own = own;
  append_channel(s, fd, type_index, false, origin);
  s->stats.channels++;
  return TRUE;
}

static void collect_ancillary(struct msghdr *msg, ancillary *a) {
  memset(a, 0, sizeof(*a));
  for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      const unsigned char *data = CMSG_DATA(c);
      for (size_t i = 0; i < n; i++) {
        int fd;
        memcpy(&fd, data + i * sizeof(int), sizeof(int));
        if (a->n_fds < MAX_FDS_PER_MESSAGE)
          a->fds[a->n_fds++] = fd;
        else
          close(fd); /* cannot happen: the buffer holds no more */
      }
      a->n_rights_blocks++;
    } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
               c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
      memcpy(&a->cred, CMSG_DATA(c), sizeof(a->cred));
      a->have_cred = true;
    } else {
      a->other_cmsg = true;
    }
  }
}

/* One datagram of at most len bytes from fd, its descriptors and
 * credentials in *a (received close-on-exec). Returns recvmsg's result;
 * *flags gets the message flags. */
static ssize_t receive(int fd, void *buf, size_t len, ancillary *a,
                       int *flags) {
  struct iovec iov = {.iov_base = buf, .iov_len = len};
  control_buf cbuf;
  struct msghdr msg = {
      .msg_iov = &iov,
      .msg_iovlen = 1,
      .msg_control = cbuf.buf,
      .msg_controllen = sizeof(cbuf.buf),
  };
  ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (n >= 0) {
    collect_ancillary(&msg, a);
    *flags = msg.msg_flags;
  }
  return n;
}

static void close_all(ancillary *a) {
  for (size_t i = 0; i < a->n_fds; i++)
    close(a->fds[i]);
  a->n_fds = 0;
}

/* After MSG_CTRUNC: was it this process running out of descriptors (the
 * client did nothing wrong) rather than a hostile sender? */
static bool out_of_descriptors(int any_fd) {
  int probe = fcntl(any_fd, F_DUPFD_CLOEXEC, 0);
  if (probe >= 0) {
    close(probe);
    return false;
  }
  return errno == EMFILE || errno == ENFILE;
}

/* Writes the line for one decision: denials within their worker's
 * budget; the loop is told when a `suppressed` line becomes due. */
static void audit(sbx_broker_server *s, const channel *ch,
                  const sbx_audit_record *rec) {
  if (!audit_on(s))
    return;
  if (rec->granted) { /* opt-in, no budget; nothing at all by default */
    sbx_audit_write(s->audit, rec);
    return;
  }
  origin_state *o = ch->o;
  if (!sbx_audit_denial(s->audit, &o->budget, now_ms(), rec,
                        &s->stats.audit_suppressed)) {
    int64_t due = sbx_audit_budget_due(&o->budget);
    if (due >= 0 && due < s->next_summary_ms)
      s->next_summary_ms = due;
  }
}

static void audit_protocol(sbx_broker_server *s, const channel *ch, pid_t pid,
                           const char *reason, int err) {
  const sbx_resolver *r = g_ptr_array_index(s->resolvers, ch->type);
  sbx_audit_record rec = {
      .type = sbx_allowlist_name(sbx_resolver_allowlist(r)),
      .pid = pid,
      .op = "protocol",
      .granted = false,
      .result = -err,
      .reason = reason,
  };
  audit(s, ch, &rec);
}

typedef enum { KEEP, CLOSE } verdict;

static verdict refuse_message(sbx_broker_server *s, const channel *ch,
                              ancillary *a, const char *reason) {
  close_all(a);
  s->stats.bad_messages++;
  audit_protocol(s, ch, a->have_cred ? a->cred.pid : 0, reason, EPROTO);
  return CLOSE;
}

/* A reply socket made for one request holds no earlier reply: one that
 * does was sent again by a client that never reads it, which would let
 * replies (and descriptors in flight) pile up there (B7). */
static bool reply_socket_reused(int reply_fd) {
  int queued = 0;
  return ioctl(reply_fd, SIOCOUTQ, &queued) == 0 && queued > 0;
}

/* Sends one reply; returns 0 or the errno of the send. */
static int send_reply(int reply_fd, const sbx_broker_request_view *q,
                      int result, int fd, const void *payload,
                      size_t payload_len) {
  sbx_broker_reply rep;
  memset(&rep, 0, sizeof(rep));
  rep.magic = SBX_BROKER_MAGIC;
  rep.version = SBX_BROKER_VERSION;
  rep.command = q->command;
  rep.id = q->id;
  rep.result = result;
  rep.payload_len = (uint32_t)payload_len;
  struct iovec iov[2] = {
      {.iov_base = &rep, .iov_len = sizeof(rep)},
      {.iov_base = (void *)payload, .iov_len = payload_len},
  };
  sbx_broker_fd_cmsg cbuf;
  struct msghdr msg = {.msg_iov = iov, .msg_iovlen = payload_len ? 2 : 1};
  if (fd >= 0) {
    rep.flags |= SBX_BROKER_REPLY_HAS_FD;
    sbx_broker_msg_attach_fd(&msg, &cbuf, fd);
  }
  ssize_t n;
  do {
    n = sendmsg(reply_fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n >= 0 ? 0 : errno;
}

typedef enum {
  REPLY_DELIVERED, /* or dropped for a client that left or never reads */
  REPLY_LOST,      /* a correct client would wait for it: close */
  REPLY_REFUSED,   /* not a connected socket: not a correct client */
} reply_outcome;

/* Replies to q, falling back to a bare ENFILE when the kernel refuses to
 * carry the descriptor (too many in flight for this user). */
static reply_outcome reply(sbx_broker_server *s, int reply_fd, bool thread,
                           const sbx_broker_request_view *q, int result, int fd,
                           const void *payload, size_t payload_len) {
  int err = send_reply(reply_fd, q, result, fd, payload, payload_len);
  if (err == ETOOMANYREFS && fd >= 0) {
    s->stats.dropped++;
    err = send_reply(reply_fd, q, -ENFILE, -1, NULL, 0);
  }
  switch (err) {
    case 0:
    case EPIPE:
    case ECONNRESET:
    case EAGAIN: /* a client that never reads: its loss alone */
      return REPLY_DELIVERED;
    case ENOBUFS:
    case ENOMEM:
    case ETOOMANYREFS:
      /* A fresh reply socket goes anyway (end of file for the client); a
       * thread channel must go too, or its client would wait forever. */
      return thread ? REPLY_LOST : REPLY_DELIVERED;
    default:
      return REPLY_REFUSED;
  }
}

/* ATTACH: may `fd`, the reply socket of a request on worker channel ch,
 * become a thread channel? Sets it up when it may. */
static int attach_channel(sbx_broker_server *s, const channel *ch, int fd,
                          sbx_decision *d) {
  d->granted = false;
  if (ch->o->n_threads >= MAX_THREAD_CHANNELS_PER_ORIGIN) {
    d->reason = "too many thread channels for this worker channel";
    return -ENOSPC;
  }
  if (s->n_threads >= s->thread_budget) {
    d->reason = "thread channels would use too many broker descriptors";
    return -ENFILE;
  }
  int type = 0, one = 1, sndbuf = THREAD_CHANNEL_SNDBUF;
  socklen_t tlen = sizeof(type);
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) < 0 ||
      type != SOCK_SEQPACKET) {
    d->reason = "thread channel is not a SOCK_SEQPACKET socket";
    return -EINVAL;
  }
  /* Credentials on every request, as on the worker channel: /proc/self. */
  if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 ||
      setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) < 0) {
    d->reason = "cannot set up the thread channel";
    return -errno;
  }
  d->granted = true;
  d->reason = NULL;
  return 0;
}

/* Audits a served request and replies to it: what a table command and
 * ATTACH share once their result is known. */
static reply_outcome answer(sbx_broker_server *s, const channel *ch,
                            const sbx_broker_request_view *q, int reply_fd,
                            int result, const sbx_broker_call *call) {
  if (result == -EMFILE || result == -ENFILE) {
    /* The broker's table is full, not the worker's (F4). */
    result = -ENFILE;
    s->stats.dropped++;
  }
  const sbx_broker_command *c = sbx_broker_command_find(q->command);
  const sbx_resolver *r = g_ptr_array_index(s->resolvers, ch->type);
  sbx_audit_record rec = {
      .type = sbx_allowlist_name(sbx_resolver_allowlist(r)),
      .pid = call->pid,
      .op = sbx_broker_command_name(q->command),
      .path = q->path,
      .path2 = q->path2,
      .fs_op = c ? c->op : SBX_FS_OP_NONE,
      .flags = sbx_broker_command_shown_flags(q),
      .granted = call->decision.granted,
      .result = result,
      .reason = call->decision.granted ? NULL : call->decision.reason,
      .target = call->decision.granted ? NULL : call->decision.object,
      .allow = call->decision.granted ? NULL : call->decision.allow,
  };
  audit(s, ch, &rec);
  reply_outcome out = reply(s, reply_fd, ch->thread, q, result, call->fd,
                            result >= 0 ? call->payload : NULL,
                            result >= 0 ? call->payload_len : 0);
  if (out == REPLY_REFUSED) {
    s->stats.bad_messages++;
    audit_protocol(s, ch, call->pid, "reply descriptor is not a socket",
                   ENOTSOCK);
  }
  return out;
}

/* ATTACH: transport, not a command of the table, so it is served here and
 * counts as no request. Worker channels only. */
static verdict serve_attach(sbx_broker_server *s, const channel *ch,
                            ancillary *a, const sbx_broker_request_view *q) {
  if (ch->thread)
    return refuse_message(s, ch, a, "attach on a thread channel");
  int reply_fd = a->fds[0];
  if (reply_socket_reused(reply_fd))
    return refuse_message(s, ch, a, "reply socket with an unread reply");
  sbx_broker_call call = {
      .pid = a->have_cred ? a->cred.pid : 0,
      .request = q,
      .fd = -1,
      .decision = {.granted = false, .reason = "no decision"},
  };
  int result = attach_channel(s, ch, reply_fd, &call.decision);
  verdict v = answer(s, ch, q, reply_fd, result, &call) == REPLY_DELIVERED
                  ? KEEP
                  : CLOSE;
  if (result == 0 && v == KEEP)
    append_channel(s, reply_fd, ch->type, true, ch->origin);
  else
    close(reply_fd);
  return v;
}

/* LISTENER: the worker's audited seccomp layer, once per worker, for a
 * type that has one. Watched like a channel from here on. */
static verdict serve_listener(sbx_broker_server *s, const channel *ch,
                              ancillary *a, const sbx_broker_request_view *q) {
  if (ch->thread)
    return refuse_message(s, ch, a, "listener on a thread channel");
  const sbx_bpf_program *program =
      g_ptr_array_index(s->verdict_programs, ch->type);
  if (!program)
    return refuse_message(s, ch, a, "listener for a type without audit");
  origin_state *o = origin_for(s, ch->origin, ch->type);
  if (o->listener_taken)
    return refuse_message(s, ch, a, "second listener");
  o->listener_taken = true;
  sbx_verdict_listener *l = sbx_verdict_listener_new(
      program, (pid_t)q->arg, a->fds[0], s->learn_resolver != NULL, NULL);
  if (!l)
    return CLOSE;
  /* Kept like a thread channel of the worker: its notifications take the
   * worker's turns (B7), and it counts against the descriptors thread
   * channels may hold. */
  channel *lc =
      append_channel(s, sbx_verdict_listener_fd(l), ch->type, true, ch->origin);
  if (lc)
    lc->listener = l;
  else
    sbx_verdict_listener_free(l);
  return KEEP;
}

/* A notification on a worker's listener: answered as its layer's
 * original program would, one audit line per distinct call. */
static verdict serve_verdict(sbx_broker_server *s, const channel *ch) {
  const channel chan = *ch;
  sbx_verdict_heard heard;
  int rc = sbx_verdict_listener_serve(chan.listener, &s->notif, &heard);
  if (rc < 0)
    return CLOSE;
  if (rc == 0)
    return KEEP;
  if (s->learned_calls) {
    GHashTable *calls = g_ptr_array_index(s->learned_calls, chan.type);
    sbx_arg_seen *args =
        g_hash_table_lookup(calls, GINT_TO_POINTER(heard.nr + 1));
    if (!args) {
      args = g_new0(sbx_arg_seen, 6);
      g_hash_table_insert(calls, GINT_TO_POINTER(heard.nr + 1), args);
    }
    for (int i = 0; i < 6; i++)
      sbx_arg_seen_add(&args[i], heard.args[i]);
  }
  if (sbx_verdict_listener_seen(chan.listener, &heard))
    return KEEP;
  const sbx_resolver *r = g_ptr_array_index(s->resolvers, chan.type);
  char call[160], allow[64];
  sbx_verdict_format_call(&heard, call, sizeof call);
  const char *name = sbx_syscall_name(heard.nr);
  g_snprintf(allow, sizeof allow, "%s: 1", name ? name : "?");
  sbx_audit_record rec = {
      .type = sbx_allowlist_name(sbx_resolver_allowlist(r)),
      .pid = heard.pid,
      .op = "syscall",
      .call = call,
      .granted = false,
      .result = -heard.error,
      .reason = heard.error
                    ? "errno verdict of a seccomp layer"
                    : "refused by a seccomp layer, let through to learn",
      .allow = name ? allow : NULL,
  };
  audit(s, &chan, &rec);
  return KEEP;
}

/* One request of ch. Attaching a channel adds to the table, which moves
 * no channel: ch stays valid. */
static verdict serve_one(sbx_broker_server *s, const channel *ch) {
  ancillary a;
  int msg_flags = 0;
  ssize_t n =
      receive(ch->fd, s->request, SBX_BROKER_MAX_REQUEST + 1, &a, &msg_flags);
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR)
      return KEEP;
    return CLOSE;
  }
  if (n == 0 && a.n_fds == 0 && !(msg_flags & MSG_CTRUNC))
    return CLOSE; /* end of file (or an empty datagram): B1 */
  if (msg_flags & MSG_CTRUNC) {
    close_all(&a);
    if (!ch->thread && out_of_descriptors(ch->fd)) {
      /* The kernel dropped the reply socket, so the client sees end of
       * file at once; the channel stays (F4). */
      s->stats.dropped++;
      audit_protocol(s, ch, a.have_cred ? a.cred.pid : 0,
                     "broker out of descriptors", EMFILE);
      return KEEP;
    }
    return refuse_message(s, ch, &a, "truncated control data");
  }
  if (msg_flags & MSG_TRUNC)
    return refuse_message(s, ch, &a, "datagram longer than the maximum");
  if (a.other_cmsg)
    return refuse_message(s, ch, &a, "unexpected control message");
  if (ch->thread) {
    if (a.n_rights_blocks != 0)
      return refuse_message(s, ch, &a, "descriptor on a thread channel");
  } else if (a.n_rights_blocks != 1 || a.n_fds != 1) {
    return refuse_message(
        s, ch, &a,
        a.n_fds == 0 ? "no reply descriptor" : "more than one descriptor");
  }
  sbx_broker_request_view q;
  const char *why = NULL;
  if (sbx_broker_decode_request(s->request, (size_t)n, &q, &why) != 0)
    return refuse_message(s, ch, &a, why);

  if (q.command == SBX_BROKER_ATTACH)
    return serve_attach(s, ch, &a, &q);
  if (q.command == SBX_BROKER_LISTENER)
    return serve_listener(s, ch, &a, &q);
  int reply_fd = ch->thread ? ch->fd : a.fds[0];
  if (!ch->thread && reply_socket_reused(reply_fd))
    return refuse_message(s, ch, &a, "reply socket with an unread reply");
  sbx_broker_call call = {
      .resolver = ch->resolver,
      .pid = a.have_cred ? a.cred.pid : 0,
      .request = &q,
      .fd = -1,
      .payload = s->payload,
      .payload_len = 0,
      .decision = {.granted = false, .reason = "no decision"},
  };
  int result = sbx_broker_command_run(&call);
  result = learn_instead(s, ch, &call, result);
  s->stats.requests++;
  s->stats.denied += !call.decision.granted;
  reply_outcome out = answer(s, ch, &q, reply_fd, result, &call);
  if (call.fd >= 0)
    close(call.fd);
  if (!ch->thread)
    close(reply_fd);
  return out == REPLY_DELIVERED ? KEEP : CLOSE;
}

/* ADD_CHANNEL_GRANTS: the worker's rules follow the request. */
static int add_granted_channel(sbx_broker_server *s, int fd, size_t type,
                               const void *bytes, size_t len) {
  g_autoptr(GBytes) data = g_bytes_new(bytes, len);
  g_autoptr(GVariant) v = g_variant_ref_sink(
      g_variant_new_from_bytes(G_VARIANT_TYPE("(suia(ssubb))"), data, FALSE));
  GError *error = NULL;
  sbx_allowlist *grants = g_variant_is_normal_form(v)
                              ? sbx_allowlist_from_variant(v, &error)
                              : NULL;
  if (!grants || type >= s->resolvers->len) {
    g_clear_error(&error);
    sbx_allowlist_free(grants);
    close(fd);
    return -EINVAL;
  }
  /* Outside the type's grantable entries: not permitted. */
  const sbx_resolver *r = g_ptr_array_index(s->resolvers, type);
  if (!grants_within(sbx_resolver_allowlist(r), grants, &error)) {
    g_error_free(error);
    sbx_allowlist_free(grants);
    close(fd);
    return -EPERM;
  }
  if (!sbx_broker_server_add_channel_with_grants(s, fd, type, grants, &error)) {
    g_error_free(error);
    return -EINVAL;
  }
  return 0;
}

/* Returns false when the control channel is finished. */
static bool serve_control(sbx_broker_server *s, int control_fd) {
  union {
    sbx_broker_control_request req;
    unsigned char bytes[sizeof(sbx_broker_control_request) +
                        SBX_BROKER_CONTROL_MAX_GRANTS];
  } *in = g_malloc(sizeof(*in));
  sbx_broker_control_request req;
  ancillary a;
  int msg_flags = 0;
  ssize_t n = receive(control_fd, in->bytes, sizeof(in->bytes), &a, &msg_flags);
  if (n < 0) {
    g_free(in);
    return errno == EAGAIN || errno == EINTR;
  }
  if (n == 0) {
    g_free(in);
    close_all(&a);
    return false;
  }
  memcpy(&req, in->bytes, MIN((size_t)n, sizeof(req)));
  size_t extra = (size_t)n > sizeof(req) ? (size_t)n - sizeof(req) : 0;
  sbx_broker_control_reply rep;
  memset(&rep, 0, sizeof(rep));
  rep.magic = SBX_BROKER_CONTROL_MAGIC;
  rep.result = -EINVAL;
  bool grants = (size_t)n >= sizeof(req) &&
                req.op == SBX_BROKER_CONTROL_ADD_CHANNEL_GRANTS;
  if ((size_t)n >= sizeof(req))
    rep.id = req.id;
  if ((size_t)n < sizeof(req) || (extra && !grants) ||
      req.magic != SBX_BROKER_CONTROL_MAGIC || (msg_flags & MSG_TRUNC)) {
    close_all(&a);
  } else if (msg_flags & MSG_CTRUNC) {
    close_all(&a);
    rep.result = out_of_descriptors(control_fd) ? -EMFILE : -EINVAL;
  } else if (req.op == SBX_BROKER_CONTROL_ADD_CHANNEL || grants) {
    if (a.n_fds == 1 && a.n_rights_blocks == 1) {
      GError *error = NULL;
      int fd = a.fds[0];
      a.n_fds = 0;
      if (grants) {
        rep.result =
            add_granted_channel(s, fd, req.arg, in->bytes + sizeof(req), extra);
      } else if (sbx_broker_server_add_channel(s, fd, req.arg, &error)) {
        rep.result = 0;
      } else {
        g_error_free(error);
      }
    }
    close_all(&a);
  } else if (req.op == SBX_BROKER_CONTROL_LEARNED) {
    if (a.n_fds == 1 && a.n_rights_blocks == 1)
      rep.result = sbx_broker_server_write_learned(s, a.fds[0]);
    close_all(&a);
  } else if (req.op == SBX_BROKER_CONTROL_STATUS) {
    close_all(&a);
    rep.result = 0;
  } else {
    close_all(&a);
  }
  g_free(in);
  rep.stats = s->stats;
  rep.stats.channels = s->n_workers;
  rep.stats.thread_channels = s->n_threads;
  rep.stats.audit_dropped = s->audit ? s->audit->dropped_total : 0;
  ssize_t w;
  do {
    w = send(control_fd, &rep, sizeof(rep), MSG_NOSIGNAL);
  } while (w < 0 && errno == EINTR);
  return w >= 0 || errno != EPIPE;
}

/* How long epoll_wait may sleep: until the next `suppressed` line is due
 * or the sink is retried, or for ever. */
static int loop_timeout(const sbx_broker_server *s) {
  int64_t due = s->next_summary_ms;
  if (sbx_audit_owes(s->audit) && s->audit_retry_ms < due)
    due = s->audit_retry_ms;
  if (due == NOTHING_DUE)
    return -1;
  int64_t left = due - now_ms();
  return left <= 0 ? 0 : (int)MIN(left, (int64_t)INT_MAX);
}

/* Writes the `suppressed` lines that are due and what the sink owes. */
static void service_audit(sbx_broker_server *s) {
  bool owes = sbx_audit_owes(s->audit);
  if (s->next_summary_ms == NOTHING_DUE && !owes)
    return;
  int64_t now = now_ms();
  if (owes && now >= s->audit_retry_ms) {
    sbx_audit_flush(s->audit);
    s->audit_retry_ms = now + SBX_AUDIT_RETRY_MS;
  }
  if (now < s->next_summary_ms)
    return;
  int64_t next = NOTHING_DUE;
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, s->origins);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    origin_state *o = value;
    sbx_audit_budget_flush(s->audit, &o->budget, now, false);
    int64_t due = sbx_audit_budget_due(&o->budget);
    if (due >= 0 && due < next)
      next = due;
  }
  s->next_summary_ms = next;
}

/* The broker is leaving: the counts still owed are written if the sink
 * takes them now. */
static int finish(sbx_broker_server *s, int control_fd, int rc) {
  close(control_fd);
  if (audit_on(s)) {
    int64_t now = now_ms();
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, s->origins);
    while (g_hash_table_iter_next(&it, NULL, &value))
      sbx_audit_budget_flush(s->audit, &((origin_state *)value)->budget, now,
                             true);
    sbx_audit_flush(s->audit);
  }
  s->next_summary_ms = NOTHING_DUE;
  return rc;
}

/* A channel reported readable joins its worker's queue, and the worker
 * joins the ring if it was not waiting already. */
static void enqueue(sbx_broker_server *s, channel *ch) {
  if (ch->queued)
    return;
  ch->queued = true;
  origin_state *o = ch->o;
  g_queue_push_tail_link(&o->ready, &ch->ready_link);
  if (!o->in_ring) {
    o->in_ring = true;
    g_queue_push_tail_link(&s->ring, &o->ring_link);
  }
}

/* One turn of the round-robin (B7): each worker waiting in the ring gets
 * one request served, from the channel of its own that has waited
 * longest, and goes back to the tail of the ring while it has more ready
 * channels. A worker's threads share its turn, so a worker flooding from
 * many threads gets no more turns than one asking from one. */
static void serve_turn(sbx_broker_server *s) {
  guint turns = g_queue_get_length(&s->ring);
  for (guint i = 0; i < turns && !g_queue_is_empty(&s->ring); i++) {
    GList *link = g_queue_peek_head_link(&s->ring);
    origin_state *o = link->data;
    g_queue_unlink(&s->ring, link);
    o->in_ring = false;
    GList *cl = g_queue_pop_head_link(&o->ready);
    channel *ch = cl->data;
    ch->queued = false;
    if (!g_queue_is_empty(&o->ready)) {
      o->in_ring = true;
      g_queue_push_tail_link(&s->ring, &o->ring_link);
    }
    if ((ch->listener ? serve_verdict(s, ch) : serve_one(s, ch)) == CLOSE)
      close_channel(s, ch);
  }
}

/* The channels added before the loop ran. */
static void watch_all(sbx_broker_server *s) {
  g_autoptr(GPtrArray) unwatched = g_ptr_array_new();
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, s->channels);
  while (g_hash_table_iter_next(&it, NULL, &value))
    if (!((channel *)value)->watched)
      g_ptr_array_add(unwatched, value);
  for (guint i = 0; i < unwatched->len; i++)
    watch_channel(s, g_ptr_array_index(unwatched, i));
}

int sbx_broker_server_run(sbx_broker_server *s, int control_fd) {
  if (s->epoll_fd < 0) {
    s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (s->epoll_fd < 0)
      return finish(s, control_fd, -errno);
    if (!watch(s->epoll_fd, control_fd, CONTROL_KEY))
      return finish(s, control_fd, -errno);
    watch_all(s);
  }
  for (;;) {
    struct epoll_event evs[EVENTS_PER_WAIT];
    /* A worker still waiting for its turn: look, but do not sleep. */
    int timeout = g_queue_is_empty(&s->ring) ? loop_timeout(s) : 0;
    bool linger = timeout != 0 && s->linger_until_us != 0;
    int n = epoll_wait(s->epoll_fd, evs, EVENTS_PER_WAIT, linger ? 0 : timeout);
    if (n == 0 && linger) {
      if (g_get_monotonic_time() >= s->linger_until_us)
        s->linger_until_us = 0;
      sched_yield();
      continue;
    }
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return finish(s, control_fd, -errno);
    }
    service_audit(s);
    for (int k = 0; k < n; k++) {
      uint32_t rev = evs[k].events;
      if (evs[k].data.u64 == CONTROL_KEY) {
        if (rev & EPOLLIN) {
          if (!serve_control(s, control_fd))
            return finish(s, control_fd, 0);
        } else if (rev & (EPOLLHUP | EPOLLERR)) {
          return finish(s, control_fd, 0);
        }
        continue;
      }
      uint64_t key = evs[k].data.u64;
      channel *ch = g_hash_table_lookup(s->channels, &key);
      if (!ch)
        continue; /* closed earlier in this batch */
      if (rev & EPOLLIN)
        enqueue(s, ch);
      else if (rev & (EPOLLHUP | EPOLLERR))
        close_channel(s, ch);
    }
    if (!g_queue_is_empty(&s->ring)) {
      serve_turn(s);
      /* The clock only once no worker waits for its turn any more. */
      if (g_queue_is_empty(&s->ring))
        s->linger_until_us = g_get_monotonic_time() + LINGER_US;
    }
  }
}
