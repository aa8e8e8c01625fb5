/*
 * src/l2tpv3d.h - the daemon's objects and the prototypes of its modules,
 * grouped per file (bgpd style).
 *
 * One process, one thread, one libevent loop.  Peers, tunnels and sessions
 * are found through hash indexes; the protocol itself lives in src/proto
 * (struct l2tp_cc / l2tp_sess), this layer owns sockets, indexes, the data
 * plane, the control socket and the config.
 */
#ifndef L2TPD_H
#define L2TPD_H

#include <stdarg.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <json-c/json.h>

#include "usl/hash.h"
#include "usl/list.h"
#include "usl/loop.h"
#include "usl/rbtree.h"
#include "usl/timer.h"
#include "proto/cc.h"
#include "proto/msg.h"
#include "proto/sess.h"
#include "config.h"
#include "ctl_proto.h"
#include "idalloc.h"
#include "snmp.h"
#include "profile.h"

struct ctl_req;
struct dp_ops;
struct tunnel_heir;
struct tunnel_reopen;

/* An IPv4 or IPv6 socket address: a sockaddr_storage is 128 bytes, this 28. */
union saddr {
	struct sockaddr sa;
	struct sockaddr_in in4;
	struct sockaddr_in6 in6;
};

/*
 * One received datagram, as the transport hands it over: lfd is the socket
 * that answers for the listener (-1: any listener of the family), to the
 * local address it was sent to.
 */
struct l2tp_rx {
	int lfd;
	const uint8_t *buf;
	size_t len;
	const struct sockaddr *from, *to;
	enum l2tp_encap encap;
};

/* Where an object came from: shown by `tunnel list`, decides reload behaviour. */
enum origin { ORIGIN_CLI, ORIGIN_CONFIG, ORIGIN_PEER };
const char *origin_name(enum origin o);

/* Global counters (per tunnel ones live in the engine). */
struct l2tpd_stats {
	uint64_t rx_msgs[L2TP_MSG_TYPE_MAX + 1];
	uint64_t tx_msgs[L2TP_MSG_TYPE_MAX + 1];
	uint64_t retransmits;		/* closed tunnels' (ctl.c: minus the live ones' at a reset) */
	uint64_t drops[L2TP_DROP__COUNT];	/* includes drops before a tunnel is found */
	uint64_t ctl_requests;
	uint64_t rx_datagrams, tx_datagrams, tx_errors;
	uint64_t refusals_sent;		/* StopCCNs answering SCCRQs we made nothing for */
	uint64_t failover_recovered;	/* control channels reset by a recovery connection */
	uint64_t failover_refused;	/* recovery SCCRQs that named no connection of theirs */
	uint64_t refusals_suppressed;	/* the same, over the global refusal rate */
	uint64_t half_open_evicted;	/* peers' half-open connections dropped for new ones */
	uint64_t hold_sockets_closed;	/* held tunnels answered by the listener: socket closed at once */
	uint64_t hold_sockets_reclaimed;	/* held tunnels' own sockets taken for new tunnels */
};

/* The control socket's own counters (ctl.c keeps them, metrics.c reads them). */
struct ctl_counters {
	unsigned clients;		/* connected now */
	uint64_t refused;		/* over ctl_max_clients */
	uint64_t dropped_slow;		/* over ctl_max_output and not reading */
	uint64_t accept_emfile;		/* accepts failed for want of descriptors */
	uint64_t evicted_idle;		/* idle clients closed: their deadline, or a slot needed */
};

/* A remote LCCE: found by (family, address, port 0) in the peer hash. */
struct peer {
	struct usl_hnode hnode;			/* l2tpd.peers */
	union saddr addr;			/* port zeroed: identity is the address */
	struct usl_list tunnels;		/* struct tunnel.peer_link */
	unsigned n_tunnels;			/* references: one per tunnel */
	struct usl_list connecting;		/* our tunnels in wait-ctl-reply (tie breaks) */
	struct idalloc config_ids;		/* lowest free config_id, when enabled */
	struct tunnel_heir *heir;		/* ours, refused by its tie break: awaits its SCCRQ */
	/* probing its silent connections when it opens a new one (tunnel.c) */
	usl_time probed;			/* last sweep */
	struct usl_timer probe_timer;		/* a deferred sweep, or the sample's deadline */
	uint32_t probe_for;			/* the newest connection's CCID */
	bool probe_sampling;			/* a sample is out: the timer judges it */
	unsigned name_next;			/* tunnel.c: the next ":N" its host name takes */
};

struct addr_use;

struct tunnel {
	struct usl_hnode by_id;			/* l2tpd.tunnels: local CCID */
	struct usl_hnode by_peer_ccid;		/* l2tpd.tunnels_by_peer: (peer, peer CCID) */
	struct usl_hnode by_name;		/* l2tpd.tunnels_by_name, when named */
	struct usl_rb_node by_order;		/* l2tpd.tunnel_order: ordered walks (list, SNMP) */
	struct usl_rb_node snmp_by_peer;	/* snmp.c: by (peer address, config_id) */
	struct usl_list peer_link;
	struct peer *peer;
	struct l2tp_cc *cc;
	uint32_t id;				/* local CCID */
	uint32_t config_id;			/* 0 when snmp_config_id is off */
	char *name;				/* NULL when unnamed: names_str() for "" */
	char *description;			/* operator text (config, CLI, peers entry); NULL: none */
	char *session_profile;			/* for sessions the peer opens; NULL: "default" */
	char *peer_entry;			/* the peers entry its SCCRQ matched; NULL: ours */
	char *pool;				/* the LNS pool it was made through; NULL: none */
	/* our own connect, given up in a tie break: opened again if this one never comes up */
	struct tunnel_reopen *reopen;
	const struct tunnel_profile *prof;	/* shared copy: a reload never changes a live tunnel */

	/* what was asked for (reload compares these; remote/local follow the wire) */
	union saddr dest_cfg, local_cfg;

	/* transport */
	int fd;
	struct usl_fd *ev;
	union saddr local, remote;
	socklen_t local_len, remote_len;
	enum l2tp_encap encap;
	enum origin origin;

	/* flags, together so that they share one word */
	bool name_indexed;
	bool in_peer_ccid_index;
	bool connected;				/* connect()ed to the peer's reply port */
	bool shared_port;			/* bound to the listener's port (connect at once) */
	struct addr_use *port_use;		/* its ephemeral port of its own, counted there */
	bool up;				/* announced established (dp up too) */
	bool closing;				/* deleted by operator or shutdown */
	bool reconnect;				/* tie-break restart: connect again when closed */
	bool debug;				/* its debug lines and a trace of its messages */
	bool pool_counted;			/* counts on its pool member (pool.c) */

	/* RFC 4951: a recovery connection names the old one, the old one it */
	uint32_t recovery_of, recovered_by;

	usl_time created, established;
	struct usl_list waiters;		/* struct ctl_req waiting for up/down */
	struct usl_list sessions;		/* struct session.tunnel_link */
	unsigned n_sessions;
	void *dp_priv;				/* the data plane's state */
	char *dp_error;				/* why the data plane refused it, for the CLI; NULL: it did not */
	char *unauth_note;			/* an unauthenticated StopCCN answered our SCCRQ: what it said */
	/*
	 * peer->connecting while we wait for the peer's SCCRP (tie breaks);
	 * l2tpd.half_open_in while we wait for its SCCCN (eviction, oldest first)
	 */
	struct usl_list connecting_link;
	/*
	 * l2tpd.held_sockets while in the StopCCN hold with a socket of its
	 * own (oldest first): the socket a new tunnel takes when descriptors
	 * run out (tunnel_reclaim_held_socket)
	 */
	struct usl_list held_link;
	/* the transport's index of connected UDP sockets by local and peer endpoint */
	struct usl_hnode by_path;
	bool path_indexed;
};

struct session {
	struct usl_hnode by_id;			/* l2tpd.sessions: local session ID */
	struct usl_hnode by_name;		/* l2tpd.sessions_by_name, when named */
	struct usl_list tunnel_link;
	struct usl_rb_node snmp_order;		/* snmp.c: by (tunnel id, session id) */
	struct tunnel *tunnel;
	struct l2tp_sess *sess;			/* NULL once the engine freed it */
	uint32_t id;
	enum origin origin;
	char *name;				/* NULL when unnamed */
	char *description;			/* operator text (config, CLI); NULL: none */
	const struct session_profile *prof;	/* shared copy (profile.h) */
	char ifname[16];			/* data plane interface (IFNAMSIZ), once known */
	usl_time created, established;
	struct usl_list waiters;
	bool named;
	bool up;
	bool deleted;				/* by the operator or a reload: not retried */
	bool down_logged;			/* its end is logged once */
	void *dp_priv;
	uint64_t dp_handle;			/* data plane object handle (kernel: ifindex) */
	char *dp_error;				/* why the data plane refused it, for the CLI; NULL: it did not */
};

/* The daemon's one global state. */
struct l2tpd {
	struct l2tpd_config *conf;
	const char *conf_path;
	/*
	 * Why the file was refused when this process runs the configuration
	 * the previous one handed over instead (handover_previous_config());
	 * NULL when it runs the file (or the defaults).  A reload that applies
	 * the file clears it.
	 */
	char *conf_refused;
	struct usl_loop *loop;
	struct usl_timerset *timers;
	const struct dp_ops *dp;
	void *dp_state;

	struct usl_hash peers;
	struct usl_hash tunnels;		/* by local CCID */
	struct usl_hash tunnels_by_peer;	/* by (peer address, peer CCID) */
	struct usl_hash tunnels_by_name;
	struct usl_rb_root tunnel_order;	/* by local CCID */
	struct usl_hash sessions;		/* by local session ID (host-unique) */
	struct usl_hash sessions_by_name;
	unsigned n_tunnels, n_sessions, n_half_open;
	struct usl_list half_open_in;		/* responders in wait-ctl-conn, oldest first */
	struct usl_list held_sockets;		/* struct tunnel.held_link */
	unsigned n_tunnels_up, n_sessions_up;

	uint32_t router_id;
	char hostname[CFG_NAME_MAX];
	usl_time started;
	/* the last reload (SIGHUP or `reload`): when (Unix time, 0: none yet) and whether it applied */
	int64_t last_reload_at;
	bool last_reload_ok;
	struct l2tpd_stats stats;
	struct ctl_counters ctl;
	/* main.c's reload, for the control socket (which imports nothing of main.c) */
	int (*reload)(json_object **summary, char *err, size_t errlen);
	bool shutting_down;
	bool foreground;
	int exit_code;
	/* handover.c: the state is going to the next process; new work is refused */
	bool restarting;
	/* handover.c: IDs of the tunnels a previous process handed over, sorted, until adopted */
	const uint32_t *kept_tunnel_ids;
	size_t n_kept_tunnel_ids;
};

extern struct l2tpd l2tpd;

/* state.c */
/* id is one a previous process handed over: not to be allocated or deleted */
bool tunnel_id_kept(uint32_t id);


/* util.c */
uint32_t random_u32_nonzero(void);
void random_bytes(void *buf, size_t len);
int sockaddr_str(const struct sockaddr *sa, char *buf, size_t len);	/* "a:p" / "[v6]:p" */
const char *sockaddr_ntop(const struct sockaddr *sa);			/* static buffer */
uint16_t sockaddr_port(const struct sockaddr *sa);
void sockaddr_set_port(struct sockaddr *sa, uint16_t port);
socklen_t sockaddr_len(const struct sockaddr *sa);
bool sockaddr_eq_addr(const struct sockaddr *a, const struct sockaddr *b);
int sockaddr_parse_host_port(const char *s, union saddr *sa, socklen_t *salen);
/* A whole file of min to max octets into a new buffer (pread: any offset); 0 or -1. */
int fd_read_whole(int fd, size_t min, size_t max, uint8_t **out, size_t *len);
/* path replaced whole (a new file renamed over it, mode 0600), never half written; 0 or -1. */
int file_write_whole(const char *path, const void *p, size_t len);
bool sockaddr_eq_full(const struct sockaddr *a, const struct sockaddr *b);
uint32_t sockaddr_hash_addr(const struct sockaddr *sa);
const char *router_id_str(uint32_t id);					/* static buffer */
uint32_t router_id_derive(const struct l2tpd_config *c);
/*
 * A file or directory the daemon trusts (its configuration, its state
 * directory): owned by root or by the daemon's user, and not writable by
 * every user.  0 (also when path does not exist), or -1 with why.
 */
int path_trusted(const char *what, const char *path, char *why, size_t len);
/* pattern with its "%d" replaced by n (e.g. "l2tpeth%d"); -1 when it does not fit. */
int ifname_expand(const char *pattern, unsigned n, char *out, size_t outlen);
void json_add_str(json_object *o, const char *k, const char *v);
/*
 * Replaces *text with a formatted message (allocated, freed by the owner):
 * error texts are rare, so objects carry a pointer, not a buffer.  On
 * allocation failure *text is left NULL.
 */
void text_set(char **text, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* *text becomes a copy of s, or NULL when s is NULL or "" (or memory is short). */
void text_copy(char **text, const char *s);
void text_vset(char **text, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* A name for printing: "" for NULL. */
static inline const char *name_str(const char *name) { return name ? name : ""; }
void json_add_int(json_object *o, const char *k, int64_t v);
/*
 * The name of an object a peer opened: "scope/word" (its peers entry and
 * its peer's host name or Remote End ID), the word's characters outside
 * those a configured name may hold made '_', at most 40 of them kept, and
 * ":n" appended when n > 1 (the n-th of that name).  false when it cannot
 * be made (no word, too long).
 */
bool name_derive(char *out, size_t len, const char *scope, const uint8_t *word, size_t wlen,
		 unsigned n);

/* sdnotify.c */
void svc_notifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* peer.c */
int peer_init(void);
struct peer *peer_find(const struct sockaddr *addr);	/* NULL when unknown; takes no reference */
struct peer *peer_get(const struct sockaddr *addr);	/* find or create, and take a reference */
void peer_put(struct peer *p);				/* drop it; frees at the last one */
/* What a peers entry (by name) holds now: its connections, its sessions. */
enum entry_count { ENTRY_TUNNELS, ENTRY_SESSIONS, ENTRY__COUNT };
unsigned entry_count(const char *entry, enum entry_count k);
bool entry_count_add(const char *entry, enum entry_count k);	/* false: out of memory */
void entry_count_del(const char *entry, enum entry_count k);

/* tunnel.c */
int tunnel_init(void);
void tunnel_shutdown_all(void);
/* Frees every tunnel at once, no message sent (exit after the deadline). */
void tunnel_free_all(void);
struct tunnel *tunnel_find(uint32_t id);
struct tunnel *tunnel_find_name(const char *name);
/* Creates a tunnel and sends the SCCRQ.  Returns NULL with a message in err. */
struct tunnel *tunnel_connect(const struct cfg_addr *peer, const struct cfg_addr *local,
			      const struct tunnel_profile *prof, const char *name,
			      const char *description, const char *secret, enum origin origin,
			      enum ctl_status *st, char *err, size_t errlen);
void tunnel_delete(struct tunnel *t, uint16_t result, const char *msg);
/*
 * RFC 4951, the recovering side: opens a recovery connection for old (a
 * tunnel restored after a crash, its sequence numbers lost) to the peer's
 * listening port.  NULL with err when it cannot be opened.
 */
struct tunnel *tunnel_recover(struct tunnel *old, char *err, size_t errlen);
/*
 * A datagram on a listener: an SCCRQ (validated before anything is made for
 * it), or a message for an existing tunnel from that tunnel's peer.  Also a
 * CCID-0 message that reached a tunnel's socket: SCCRQs are never a
 * tunnel's business.
 */
void tunnel_input_listener(const struct l2tp_rx *rx);
/* A datagram on the tunnel's own socket. */
void tunnel_input(struct tunnel *t, const uint8_t *buf, size_t len, const struct sockaddr *from);
void tunnel_dp_done(struct tunnel *t, int err);
/* its kernel object vanished (deleted by hand): clear it, say why */
void tunnel_dp_lost(struct tunnel *t, const char *why);
bool tunnel_reclaim_held_socket(void);
void tunnel_probe_due(struct usl_timer *tm);
json_object *tunnel_json(const struct tunnel *t, bool detail);
/*
 * A reload: whether the configuration now in force (l2tpd.conf) still
 * accepts peer-opened tunnel t as old did (same peers entry, still
 * accepting, same secret).  0, or the StopCCN result to clear it with and why.
 */
uint16_t tunnel_reaccept(const struct tunnel *t, const struct l2tpd_config *old, char *why,
			 size_t len);
/*
 * A reload changed t's profile to p: when only settings a live connection
 * can take differ, they are applied now (changed lists them: "" when none)
 * and true is returned; else false, *restart naming the first setting that
 * needs a new connection.
 */
bool tunnel_reconfigure(struct tunnel *t, const struct tunnel_profile *p, char *changed,
			size_t len, const char **restart);
/* The profile a peer-opened tunnel would be accepted with now. */
void tunnel_peer_profile(const struct tunnel *t, struct tunnel_profile *out);
/* The descriptions c gives t and its sessions (a static one's, its peers entry's). */
void tunnel_describe(struct tunnel *t, const struct l2tpd_config *c);
/*
 * Debugging one tunnel: its control messages traced in the log (decoded,
 * at info) and the debug lines of its handling logged whatever the level.
 * A peer's: every tunnel to that address, present and future.  -1: ENOMEM.
 */
void tunnel_set_debug(struct tunnel *t, bool on);
int tunnel_debug_peer(const struct sockaddr *addr, bool on);
/* {peers: [addr], tunnels: [id]} being debugged. */
json_object *tunnel_debug_json(void);
/* Restart handover: up, with nothing half-done (its sessions may be). */
bool tunnel_can_handover(const struct tunnel *t);
/* Its record (the daemon's, the engine's, the data plane's, its sessions'). */
struct usl_pack;
struct usl_unpack;
void tunnel_save(struct tunnel *t, struct usl_pack *w);
/*
 * Makes a handed-over tunnel again from its record, fd its socket (-1:
 * none); *n_sessions counts the sessions it got back.  NULL with a reason
 * when it cannot be (nothing of it is left, unless the data plane lost it:
 * then it is cleared with a StopCCN).
 */
struct tunnel *tunnel_restore(struct usl_unpack *r, int fd, bool crashed, unsigned *n_sessions, char *err,
			      size_t errlen);
/* The peer as list, show and monitor print it: "a:p", "[v6]:p", or over IP the bare address. */
void tunnel_peer_str(const struct tunnel *t, char *buf, size_t len);
/* How the log names a tunnel: "st1 (3735928559)", or its ID alone. */
const char *tunnel_label(const struct tunnel *t, char *buf, size_t len);
json_object *drop_counts_json(const uint64_t *drops);
json_object *msg_type_counts_json(const uint64_t *counts);

/* objref.c */
/*
 * The tunnel (session) with that ID, or when id is 0 with that name; NULL
 * with a not-found message in err that lists what exists.
 */
struct tunnel *objref_tunnel(uint32_t id, const char *name, char *err, size_t errlen);
struct session *objref_session(uint32_t id, const char *name, char *err, size_t errlen);

/* session.c */
int session_init(void);
struct session *session_find(uint32_t id);
struct session *session_find_name(const char *name);
struct session *session_open(struct tunnel *t, const struct session_profile *prof,
			     const char *name, const char *description,
			     const char *remote_end_id, enum origin origin,
			     enum ctl_status *st, char *err, size_t errlen);
void session_delete(struct session *s, uint16_t result, const char *msg);
void session_dp_done(struct session *s, int err);
void session_dp_lost(struct session *s, const char *why);
json_object *session_json(const struct session *s, bool detail);
/*
 * A reload: whether the configuration now in force would accept the
 * peer-opened session s with the settings it has (its Remote End ID still
 * allowed, mapped to the same profile, interface name and bridge).  0, or
 * the CDN result to clear it with and why.
 */
uint16_t session_reaccept(const struct session *s, char *why, size_t len);
/* Restart handover: established in the data plane and not a PPP one (pppd is our child). */
bool session_can_handover(const struct session *s);
void session_save(const struct session *s, struct usl_pack *w);
/* NULL when the record is malformed (r->bad) or the data plane lost it (then cleared, CDN). */
struct session *session_restore(struct tunnel *t, struct usl_unpack *r, bool crashed);
uint32_t session_alloc_id(void);
/* engine callbacks that concern sessions (wired in tunnel.c's ops table) */
int session_on_accept(struct l2tp_cc *cc, struct l2tp_sess *ls, const struct l2tp_msg *req,
		      struct l2tp_sess_cfg *out);
void session_on_event(struct l2tp_cc *cc, struct l2tp_sess *ls, enum l2tp_sess_state from,
		      enum l2tp_sess_state to, const struct l2tp_result *why);
void session_on_freed(struct l2tp_cc *cc, struct l2tp_sess *ls);
int session_on_dp_create(struct l2tp_cc *cc, struct l2tp_sess *ls);
void session_on_dp_delete(struct l2tp_cc *cc, struct l2tp_sess *ls);
int session_on_dp_prepare(struct l2tp_cc *cc, struct l2tp_sess *ls);

/* transport.c */
/*
 * Where datagrams go: the layer above (tunnel.c) registers these, so that
 * the transport calls nothing of it by name.
 */
struct transport_rx {
	void (*listener)(const struct l2tp_rx *rx);	/* one no tunnel's socket took */
	void (*tunnel)(struct tunnel *t, const uint8_t *buf, size_t len,
		       const struct sockaddr *from);	/* one of t's own */
	struct tunnel *(*find)(uint32_t id);		/* t still there after a message? */
	bool (*reclaim_socket)(void);			/* out of descriptors: free one */
};
void transport_set_rx(const struct transport_rx *rx);
int transport_init(const struct l2tpd_config *c, char *err, size_t errlen);
void transport_shutdown(void);
int transport_replace(const struct l2tpd_config *c, char *err, size_t errlen);
/* Opens the tunnel's own socket (bound locally, not yet connected). */
int transport_tunnel_open(struct tunnel *t, char *err, size_t errlen);
void transport_tunnel_close(struct tunnel *t);
/* A handed-over tunnel's socket (-1: a raw IP tunnel, none) taken back into the loop. */
int transport_tunnel_reopen(struct tunnel *t, char *err, size_t errlen);
int transport_tunnel_adopt(struct tunnel *t, int fd, char *err, size_t errlen);
/* Stops (false) or resumes reading the listeners: a restart leaves what arrives to the next process. */
void transport_listeners_read(bool on);
/* UDP receive-buffer drops in this network namespace (all sockets). */
uint64_t transport_udp_rcvbuf_errors(void);
int transport_tunnel_connect(struct tunnel *t, const struct sockaddr *peer);
/* The tunnel whose socket is connected from local to remote (addresses and ports), or NULL. */
struct tunnel *transport_path_holder(const struct sockaddr *local, const struct sockaddr *remote);
int transport_send(struct tunnel *t, const uint8_t *buf, size_t len);
/* Answers rx from its listener (StopCCN refusals before a tunnel exists). */
int transport_listener_reply(const struct l2tp_rx *rx, const uint8_t *buf, size_t len);
/* Sets p's dscp, ttl and df on the tunnel's socket (a reload; bind_device needs a new one). */
int transport_tunnel_reapply(struct tunnel *t, const struct tunnel_profile *p,
			     char *err, size_t errlen);
/* The listeners send with c's peer_default tunnel profile's dscp, ttl and df. */
void transport_listeners_configure(const struct l2tpd_config *c);
/* What the socket that sends the tunnel's messages runs with (read back), for tunnel show. */
struct transport_settings {
	bool own_socket;		/* false: a listener sends for it (raw IP, StopCCN hold) */
	unsigned dscp, ttl;
	char df[16];			/* "on", "off", "pmtu", "probe", "interface", "omit" */
	char bind_device[CFG_NAME_MAX];
};
int transport_tunnel_settings(const struct tunnel *t, struct transport_settings *out);

/* ctl.c */

int ctl_init(const struct l2tpd_config *c, char *err, size_t errlen);
void ctl_shutdown(void);

/* metrics.c */
/* The daemon's metrics in the Prometheus text format (malloc'd), or NULL. */
char *metrics_text(size_t *len);
/* Serves /metrics on metrics_listen, when set.  -1 with a reason. */
int metrics_init(const struct l2tpd_config *c, char *err, size_t errlen);
void metrics_shutdown(void);

/* hooks.c */
int hooks_init(void);
void hooks_shutdown(void);
/* Runs the hook of `which` ("tunnel-up"...) for t or s (hooks_init subscribes it). */
void hooks_run(const char *which, const struct tunnel *t, const struct session *s);

/* pppd.c */
/* The pppd binary PPP pseudowires run (L2TPV3D_PPPD, else /usr/sbin/pppd). */
const char *pppd_path(void);
/*
 * Attaches a PPPoL2TP socket to the kernel session of s (already created)
 * and starts pppd on it, named ifname; on_exit(pid, status, arg) runs when
 * it exits (child.h).  The pid, or -1 with errno and a reason in err.
 */
pid_t pppd_start(const struct session *s, const char *ifname,
		 void (*on_exit)(pid_t pid, int status, void *arg), void *arg,
		 char *err, size_t errlen);
/* Stops watching pid and sends it SIGTERM. */
void pppd_stop(pid_t pid);

/* handover.c: restart and upgrade without dropping a pseudowire (doc/restart.md) */
enum handover_how {
	HANDOVER_EXEC,		/* l2tpv3ctl restart: exec our own binary, descriptors inherited */
	HANDOVER_FDSTORE,	/* systemctl restart: systemd's file descriptor store */
};
/*
 * At start, before the data plane: takes the state and descriptors a
 * previous process handed over, if any, and checks them whole (format,
 * version, checksum).  Nothing to adopt when they are absent or refused
 * (the reason is logged once and shown by `show daemon`).
 */
void handover_load(void);
/*
 * The file (path) was refused with file_err at a start: when a previous
 * process handed its tunnels over with its configuration (state format 3
 * on), that configuration, parsed, the refusal logged as an error;
 * otherwise NULL (a fresh start, a refused state, an older one without the
 * configuration), and the start fails on the file as it would have.
 */
struct l2tpd_config *handover_previous_config(const char *path, const char *file_err);
/* After the modules: makes the handed-over tunnels and sessions again. */
void handover_adopt(void);
/*
 * Starts a restart: new work is refused, work under way settles (a few
 * seconds at most), what cannot be carried is cleared, then the state is
 * saved and the process execs or exits.  -1 with a reason when one is
 * under way already or the state cannot be saved.
 */
/* -1, or HANDOVER_E_CONFIG: the binary to exec does not load the configuration */
#define HANDOVER_E_CONFIG	(-2)
int handover_begin(enum handover_how how, char *err, size_t errlen);
/* main's argv: what the exec of a restart runs again. */
void handover_set_argv(char **argv);
/* How this process started, for `show daemon` and the metrics. */
json_object *handover_json(void);
struct handover_stats {
	const char *start;		/* "fresh", "restarted", "fell-back" */
	uint64_t restarts;		/* carried over since the last fresh start */
	unsigned tunnels, sessions, dropped;	/* adopted (dropped) by this start */
	int64_t restart_ms;		/* request to adopted, the last restart */
};
void handover_stats(struct handover_stats *st);

/* failover.c: RFC 4951 recovery after a crash (doc/failover.md) */
int failover_init(void);
/* At the start: recovers what the last process recorded, unless a restart handed it over. */
void failover_recover(bool handed_over);
/* At the end: a clean stop removes the record, a restart keeps it. */
void failover_stop(bool restarting);
json_object *failover_json(void);	/* for `show daemon` */
/* The standby of a pair becomes the active one: the peer box's record, recovered. */
int failover_takeover(json_object **out, char *err, size_t errlen);

/* ha.c: an active/standby pair (the failover record to the peer box, and from it) */
int ha_init(char *err, size_t errlen);
void ha_shutdown(void);
void ha_publish(const uint8_t *rec, size_t len);
const char *ha_peer_record_path(void);	/* NULL: this box takes no peer's record */
json_object *ha_json(void);

/* pwred.c: pseudowire redundancy (static sessions with backup tunnels) */
struct pwred_state {
	char session[CFG_NAME_MAX];
	char primary[CFG_NAME_MAX];	/* its own tunnel */
	char tunnel[CFG_NAME_MAX];	/* where it is up now; "" when nowhere */
	char last_tunnel[CFG_NAME_MAX];	/* where it was up last */
	char why[160];			/* why it is on a backup, or moving */
	bool active_backup;
	unsigned switches;		/* moves from one tunnel to another */
	int64_t since;			/* when it came up where it is (Unix time) */
};
int pwred_init(void);
/* After a reload: records for the sessions that now have backups, none for the others. */
void pwred_config_changed(void);
/* True when static session sess (of config c) may live on tunnel as one of its backups. */
bool pwred_visiting(const char *sess, const char *tunnel, const struct l2tpd_config *c);
const struct pwred_state *pwred_state(const char *sess);
/* Iteration over every record: pwred_next(NULL) is the first. */
const struct pwred_state *pwred_next(const struct pwred_state *prev);
/* {path, primary, tunnel, why, switches, since}, or NULL for a session without backups. */
json_object *pwred_json(const char *sess);

/* pool.c: LNS pools (doc/failover.md) */
/*
 * Takes the pools of c (at start and on reload): what happened to members
 * that stay (hold-downs, last failure) is kept, the tunnel counts are taken
 * again from the live tunnels.  false when out of memory (nothing changed).
 */
bool pool_apply(const struct l2tpd_config *c);
void pool_shutdown(void);
/*
 * tunnel_connect() towards the member of pool name that the spread rule
 * picks (its port, when the member leaves it, from prof); the tunnel
 * carries the pool's name and counts on the member.
 */
struct tunnel *pool_connect(const char *name, const struct cfg_addr *local,
			    const struct tunnel_profile *prof, const char *tname,
			    const char *description, const char *secret, enum origin origin,
			    enum ctl_status *st, char *err, size_t errlen);
/* A pool tunnel stops (why: the result it stops with): the member is held down unless we stopped it. */
void pool_tunnel_down(struct tunnel *t, const struct l2tp_result *why);
/* It is freed: it counts no more (no failure). */
void pool_tunnel_release(struct tunnel *t);
/* Members of the pool (0: no such pool); whether one of them is not held down. */
unsigned pool_size(const char *name);
bool pool_available(const char *name);
/* True when pool name of c lists the destination dest. */
bool pool_lists(const struct l2tpd_config *c, const char *name, const struct sockaddr *dest);
/* `show daemon`'s "pools". */
json_object *pools_json(void);
/* Every member of every pool, for the metrics. */
void pool_foreach_member(void (*fn)(const char *pool, const char *member, unsigned tunnels,
				    bool up, void *arg), void *arg);

/* reload.c */
/* Switches to newc (taking ownership) and applies the difference to live objects. */
int config_apply(struct l2tpd_config *newc, json_object *summary, char *err, size_t errlen);

/* statics.c: the static tunnels and sessions, kept up (it follows their events) */
void static_tunnels_start(void);
void static_tunnels_stop(void);
/*
 * Starts static tunnel st of config c with its sessions; false when it
 * does not (shut down, an unknown profile, or a failure: that is retried).
 */
bool static_tunnel_start(const struct l2tpd_config *c, const struct static_tunnel *st);
/* Starts ss of config c on t; false when it cannot (a shut down one is not started). */
bool static_session_start(struct tunnel *t, const struct l2tpd_config *c,
			  const struct static_session *ss);
/* Opens static session `sess` (of any static tunnel's definition) on t; false when it cannot. */
bool static_session_open(struct tunnel *t, const char *sess);
/* Its profile, with the session's own interface name when it sets one; false: unknown. */
bool static_session_profile(const struct l2tpd_config *c, const struct static_session *ss,
			    struct session_profile *out);
/* Retries of what c no longer lists, or now holds down: dropped (a reload). */
void static_retries_prune(const struct l2tpd_config *c);
/* The static tunnels (sessions: their static sessions) down and waiting to be started again. */
json_object *static_retries_json(bool sessions);
/*
 * The static tunnels (sessions: their static sessions) the configuration
 * holds administratively down (shutdown = true), for `tunnel list` and
 * `session list`.
 */
json_object *static_shutdown_json(bool sessions);

#endif
