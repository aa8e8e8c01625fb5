/*
 * src/dp_kernel_int.h - what the pieces of the kernel data plane share:
 * its tunables, its objects (struct kreq, ktunnel, ksession), its state
 * (kdp) and the functions one piece calls in another.  Included by
 * src/dp_kernel*.c only; the rest of the daemon sees src/dp.h.
 */
#ifndef L2TPD_DP_KERNEL_INT_H
#define L2TPD_DP_KERNEL_INT_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include <event2/util.h>
#include <linux/netlink.h>

#include "dp.h"
#include "dp_state.h"
#include "l2tpv3d.h"
#include "usl/log.h"

#define NL_RCVBUF	(16 << 20)	/* asked for; the kernel may give less */
#define NL_ACK_COST	1024		/* receive buffer one answer takes (skb truesize) */
#define RT_ANSWER_COST	4096		/* an answer on the route socket, budgeted as a link message */
#define WINDOW_MIN	16
#define WINDOW_MAX	4096		/* requests in flight */
#define TX_BATCH_MSGS	256		/* per sendmsg: the kernel runs them inside the call */
#define TX_BUFSZ	(64 * 1024)
#define RX_BATCH	32
#define RX_BUFSZ	8192
#define RX_ROUNDS	8		/* recvmmsg calls per readable event */
#define SYNC_MS		5000		/* start-up and shut-down waits: the kernel's silence */
#define SYNC_MAX_MS	600000		/* and their whole */
#define IFNAME_NUMBERS	100000		/* "%d" is at most 5 digits (config_table.c) */
#define NAME_RETRIES	8		/* IFNAME taken between our check and the create */
#define VERIFY_DELAY_MS	1000		/* lost notices: check everything after this */
#define CONFIRM_DELAY_MS 1000		/* a tunnel's delete notice: ask the kernel after this */
#define COOKIE_LOOK_MS	1000		/* a young session's counters: first look */
#define COOKIE_LOOK_MAX_MS 30000	/* then at doubling intervals up to this */
#define COOKIE_WATCH_MS	(5 * 60 * 1000)	/* for this long after it came up */
#define STATS_LINGER_MS	(5 * 60 * 1000)	/* every session's counters: refreshed this long after a scrape */
#define STATS_DUTY	10		/* and a dump at most 1/10 of the time, however slow the kernel's */
#define STATS_RX_PARTS	4		/* its parts read (and so made by the kernel) per loop turn */
#define SWEEP_RETRY_MS	100		/* a restart's sweep waits for a counters dump this often */
#define ETH_OVERHEAD	14
#define VLAN_OVERHEAD	4

/* K_GONE: deleted outside the daemon, the engine not yet done with it */
/* K_LINKING: the kernel session exists, its interface is being set up */
/* K_READY: a session made before its call connected, interface down (prepare) */
/* K_KEPT: a previous process's tunnel, handed over, waiting for tunnel_adopt */
enum kstate { K_STALE, K_KEPT, K_CREATING, K_LINKING, K_READY, K_UP, K_DELETING, K_GONE };

struct kreq;
struct nlchan;
typedef void (*kreq_done_fn)(struct kreq *r, int err, const char *ext);
typedef void (*kreq_data_fn)(struct kreq *r, const struct nlmsghdr *nlh);

struct kreq {
	struct usl_hnode by_seq;	/* kdp.inflight, once sent */
	struct usl_list qlink;		/* its channel's queue, until sent */
	struct usl_list tlink;		/* ktunnel.sess_dels, while queued */
	struct nlchan *ch;		/* the socket it goes out on */
	bool queued;
	bool found;			/* a probe (or GET) saw its object */
	uint32_t seq;
	void *obj;			/* ktunnel, ksession, or the request a probe checks */
	kreq_done_fn done;		/* exactly once: error/ACK/DONE, or the settled probe */
	kreq_data_fn data;		/* GET replies and dump parts */
	uint32_t msg[];			/* the encoded request (aligned) */
};

struct ktunnel {
	struct usl_hnode by_id;		/* kdp.tunnels: exactly the "+id" lines in force */
	struct usl_list link;		/* start-up and shut-down walks */
	struct tunnel *t;		/* NULL once the engine let go */
	struct kreq *req;		/* create or delete unanswered */
	struct usl_list sess_dels;	/* its sessions' SESSION_DELETEs not sent yet */
	struct usl_list confirm;	/* kdp.confirm_q: a delete notice to confirm */
	usl_time confirm_at;		/* when to ask the kernel about it */
	bool sess_notices;		/* session delete notices came meanwhile */
	uint32_t id;
	enum kstate state;
	bool present;			/* the start-up look saw it */
	bool unrecorded;		/* handed over, not in the state file */
	uint32_t kpeer;			/* K_KEPT: the kernel's peer id and encapsulation */
	uint16_t kencap;
};

/* An interface a session is known by in kdp.links (l2tpeth, and its VLAN). */
struct klink {
	struct usl_hnode node;
	unsigned ifindex;		/* 0: not indexed */
	struct ksession *ks;
};

/* What a SESSION_CREATE programs: the call's parameters when it was sent. */
struct kprog {
	uint32_t peer_sid;
	uint8_t l2spec, recv_seq, send_seq;
	uint8_t cookie_len, peer_cookie_len;
	uint8_t cookie[8], peer_cookie[8];
};

struct ksession {
	struct session *s;		/* NULL once the engine let go */
	struct kprog prog;
	struct klink links[2];		/* kindex, ifindex (when it differs) */
	struct kreq *req;		/* create unanswered */
	unsigned refs;			/* s, plus every request pointing here */
	uint32_t tid, sid;
	enum kstate state;
	uint16_t pw;			/* enum l2tp_pw_type (ours) */
	char pattern[CFG_NAME_MAX];	/* ifname pattern, for retries */
	char kname[IFNAMSIZ];		/* the kernel session's interface */
	char ifname[IFNAMSIZ];		/* what the operator uses: kname, its VLAN, pppd's */
	char link_lost[IFNAMSIZ];	/* an interface of ours vanished: being checked */
	unsigned kindex, ifindex, mtu;
	unsigned name_tries;
	unsigned links_pending;		/* set-up requests unanswered (K_LINKING) */
	bool early;			/* prepared: its interface stays down until activated */
	bool activate;			/* the engine's create came: up as soon as made */
	int link_err;			/* the first one's error */
	const char *link_what;		/* and which it was */
	pid_t pppd;
	struct dp_session_stats stats;
	usl_time stats_at;
	bool stats_valid, stats_pending, cookie_discards_reported;
	struct usl_timer cookie_timer;	/* young, with our cookie, nothing received yet */
	usl_time up_at;
	unsigned cookie_look_ms;	/* the interval before the next look */
	bool cookie_warned;		/* the mismatch is in the log */
};

/* An ifname pattern's next number: names are handed out in order, skipping used ones. */
struct name_ctr {
	struct name_ctr *next;
	unsigned n;
	char pattern[CFG_NAME_MAX];
};

/*
 * One netlink socket of the request machine: generic netlink for the l2tp
 * family, rtnetlink for the sessions' interfaces.  Both run the same way
 * (batches, a window, resync); sequence numbers are shared, so one hash
 * finds any request.
 */
struct nlchan {
	const char *name;		/* for logs */
	int fd;
	struct usl_fd *ev;
	unsigned answer_cost;		/* receive buffer one answer takes */
	unsigned rx_max;		/* datagrams read per readable event */
	unsigned n_inflight, window, window_max;
	struct usl_list queue;		/* struct kreq, unsent */
};

/* The kernel data plane's state: one, kdp (dp_kernel.c). */
struct kdp_state {
	struct nlchan gnl, rtnl;
	struct nlchan dump;		/* l2tp too, for the counters' dump alone (stats_dump) */
	uint16_t family;
	uint32_t seq;
	struct usl_hash inflight;	/* struct kreq by seq */
	struct event *flush_ev;		/* runs nl_flush() once this loop turn is done */
	bool flush_pending;
	struct usl_timer retry_timer;	/* after a failed send */
	struct usl_hash tunnels;	/* struct ktunnel by id */
	struct usl_hash links;		/* struct klink by ifindex: our sessions' interfaces */
	uint32_t mcgrp;			/* the l2tp family's multicast group, 0: none */
	struct name_ctr *names;
	uint64_t resyncs;
	struct usl_timer verify_timer;	/* after lost notices: check everything */
	struct usl_list confirm_q;	/* struct ktunnel with a delete notice, oldest first */
	struct usl_timer confirm_timer;	/* the next GET of those */
	bool verify_l2tp, verify_link;	/* which notices were lost */
	bool children;			/* child_init() done */
	/* restart handover: the previous process's objects being adopted */
	struct usl_timer adopt_timer;	/* the first loop turn: adoption is over */
	unsigned adopted_tunnels, adopted_sessions;
	unsigned adopt_checking;	/* adopted sessions' GETs unanswered */
	unsigned adopt_lost;		/* adopted sessions the kernel contradicted */
	unsigned swept;			/* kernel sessions nobody claimed, deleted */
	bool sweeping, sweep_waiting;	/* the dump for those: under way, or waiting its turn */
	/* every session's counters, for scrapes: one dump at a time */
	bool stats_dumping;		/* a dump on its way */
	bool stats_have;		/* one came in */
	usl_time stats_started;		/* the last dump sent */
	usl_time stats_next;		/* the last one in: the next not before */
	usl_time stats_at;		/* the last one in was sent then: its counters are newer */
	usl_time stats_wanted;		/* the last scrape */
	int64_t stats_interval_ms;	/* the scrapes' interval between dumps */
	struct usl_timer stats_timer;	/* the next dump, while someone scrapes */
	/* state file */
	int lock_fd;
	struct dps_writer rec;
	struct usl_timer rec_timer;	/* next rewrite attempt after a failed one */
};

/* Attributes of a message or of a nest into tb[0..max]. */
struct attr_table {
	const struct nlattr **tb;
	unsigned max;
};

struct sync_result {
	int err;
	char ext[128];
};

extern struct kdp_state kdp;
extern struct log_ratelimit nl_rl;
extern uint8_t scratch[1024];
extern const struct dpw_ops watch_ops;

static inline usl_time now(void)
{
	return usl_timerset_now(l2tpd.timers);
}

/* dp_kernel_nl.c: requests, answers, resync; the family; the sockets */
bool kreq_seq_eq(const struct usl_hnode *n, const void *key);
struct nlmsghdr *l2tp_msg(uint8_t cmd, uint16_t flags);
void flush_soon(void);
struct kreq *kreq_submit_on(struct nlchan *ch, const struct nlmsghdr *nlh, void *obj,
			    kreq_done_fn done, kreq_data_fn data);
struct kreq *kreq_submit(const struct nlmsghdr *nlh, void *obj, kreq_done_fn done,
			 kreq_data_fn data);
void kreq_unqueue(struct kreq *r);
void on_flush_event(evutil_socket_t fd, short what, void *arg);
void on_retry_timer(struct usl_timer *tm);
int attr_cb(const struct nlattr *a, void *data);
void l2tp_attrs(const struct nlmsghdr *nlh, const struct nlattr **tb);
uint32_t attr_u32(const struct nlattr *a);
void probe_data(struct kreq *p, const struct nlmsghdr *nlh);
bool chan_busy(const struct nlchan *ch);
int nl_sync(int timeout_ms);
void sync_done(struct kreq *r, int err, const char *ext);
int family_resolve(char *err, size_t errlen);
uint16_t attr_u16(const struct nlattr *a);
uint8_t attr_u8(const struct nlattr *a);
int nl_open(struct nlchan *ch, int proto, const char *name, unsigned answer_cost,
	    char *err, size_t errlen);
void chan_drop_queue(struct nlchan *ch);

/* dp_kernel_owned.c: the state file, the start-up cleanup */
bool ktunnel_id_eq(const struct usl_hnode *n, const void *key);
struct ktunnel *ktunnel_find(uint32_t id);
struct ktunnel *ktunnel_new(uint32_t id, enum kstate state);
void record_add(struct ktunnel *kt);
void record_del(struct ktunnel *kt);
void rec_flush(void);
void on_rec_timer(struct usl_timer *tm);
int rec_open(char *err, size_t errlen);
int tunnels_look(enum kstate state, const char *what, char *err, size_t errlen);
int stale_cleanup(char *err, size_t errlen);

/* dp_kernel.c: tunnels, sessions */
bool gone(int err);
void log_kernel_error(const char *what, uint32_t id, const char *cmd, int err,
		      const char *ext);
void tunnel_send_delete(struct ktunnel *kt);
uint16_t sess_pw(const struct session *s);
struct name_ctr *name_counter(const char *pattern);
void ks_put(struct ksession *ks);
void session_prog(const struct session *s, struct kprog *p);
bool prog_identity_differs(const struct kprog *a, const struct kprog *b);
struct nlmsghdr *session_seq_msg(const struct ksession *ks);
void links_add(struct ksession *ks);
void links_del(struct ksession *ks);
struct ksession *links_find(unsigned ifindex);

/* dp_kernel_stats.c: statistics, modify, describe */
bool session_get_as(struct ksession *ks, kreq_done_fn done, kreq_data_fn data);
bool session_get(struct ksession *ks, kreq_done_fn done);
void on_cookie_timer(struct usl_timer *tm);
void cookie_watch(struct ksession *ks);
int kernel_session_stats(const struct session *s, struct dp_session_stats *st);
void on_stats_timer(struct usl_timer *tm);
int64_t kernel_stats_refresh_all(int64_t interval_ms);
int kernel_session_stats_cached(const struct session *s, struct dp_session_stats *st);
int kernel_session_modify(struct session *s);
unsigned kernel_pw_types(uint16_t *types, unsigned max);
json_object *kernel_describe(const struct tunnel *t, const struct session *s);

/* dp_kernel_lost.c: objects deleted behind our back */
struct ksession *ksession_up(uint32_t tid, uint32_t sid);
void session_check_gone(struct ksession *ks, int err);
void on_confirm_timer(struct usl_timer *tm);
void on_verify_timer(struct usl_timer *tm);

/* dp_kernel_handover.c: the restart handover */
int kept_scan(char *err, size_t errlen);
void on_adopt_timer(struct usl_timer *tm);
void kernel_tunnel_save(const struct tunnel *t, struct usl_pack *w);
int kernel_tunnel_adopt(struct tunnel *t, struct usl_unpack *r);
void kernel_session_save(const struct session *s, struct usl_pack *w);
int kernel_session_adopt(struct session *s, struct usl_unpack *r);
bool kernel_idle(void);

#endif
