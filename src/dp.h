/*
 * src/dp.h - the data plane interface.
 *
 * The protocol engine asks for kernel objects through these ops; creates
 * are asynchronous: an op returns 0 when the request is on its way and the
 * data plane later calls tunnel_dp_done() / session_dp_done() (it may do
 * so from inside the op).  A failure rolls the protocol state back
 * (StopCCN/CDN with a result code to the peer, an error to the CLI).
 *
 *   null   - records what it would program; for control-plane-only hosts,
 *            tests and benchmarks on kernels without L2TP.
 *   kernel - the Linux l2tp generic netlink family (libmnl).
 */
#ifndef L2TPD_DP_H
#define L2TPD_DP_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

struct tunnel;
struct session;
struct usl_pack;
struct usl_unpack;

struct dp_session_stats {
	uint64_t tx_packets, tx_bytes, tx_errors;
	uint64_t rx_packets, rx_bytes, rx_errors;
	uint64_t rx_seq_discards, rx_oos_packets, rx_cookie_discards;
	/*
	 * Frames discarded for their cookie and not one received: the peer
	 * ignores our Assigned Cookie AVP (or sends another cookie).
	 */
	bool cookie_mismatch;
};

/*
 * init() failed on local state (state_dir, its lock or state file), not on
 * the kernel: "--dataplane null" is not the cure, a writable state_dir is.
 */
#define DP_ERR_STATE	(-2)

struct dp_ops {
	const char *name;
	/* -1: no data plane here; DP_ERR_STATE: its state_dir is unusable */
	int (*init)(char *err, size_t errlen);
	void (*shutdown)(void);
	int (*tunnel_create)(struct tunnel *t);
	void (*tunnel_delete)(struct tunnel *t);
	int (*session_create)(struct session *s);
	void (*session_delete)(struct session *s);
	/*
	 * Optional: the call is answered, its connected message not yet in;
	 * make what takes long now (dp_session_prepare in proto/cc.h).  0:
	 * something was made (session_delete is owed; the session_create at
	 * the connected message finishes it); non-zero: nothing was.  Never
	 * calls session_dp_done().
	 */
	int (*session_prepare)(struct session *s);
	/* Current counters; -1 with errno when unavailable. */
	int (*session_stats)(const struct session *s, struct dp_session_stats *st);
	/*
	 * Optional (both or neither): every session's counters for a scrape,
	 * with no request per session and no wait.  stats_refresh_all() says
	 * that someone reads them all now: the data plane refreshes them in
	 * one go (the kernel's: one dump) at most every interval_ms, and
	 * keeps doing so while the calls keep coming.  It returns the age in
	 * ms of what session_stats_cached() answers (every answer is at least
	 * that new), or -1 before the first refresh is in.
	 * session_stats_cached() is session_stats() from that cache, asking
	 * nothing: -1 with errno when the session's counters are not known
	 * (not in the data plane, or not yet refreshed).
	 */
	int64_t (*stats_refresh_all)(int64_t interval_ms);
	int (*session_stats_cached)(const struct session *s, struct dp_session_stats *st);
	/* What is programmed for this object (for `show`), or NULL. */
	json_object *(*describe)(const struct tunnel *t, const struct session *s);
	/*
	 * The session's negotiated settings changed after it came up
	 * (sequencing, the peer's circuit status from an SLI): reprogram.
	 * 0, or a negative errno.  NULL: nothing to do.
	 */
	int (*session_modify)(struct session *s);
	/*
	 * Pseudowire types (enum l2tp_pw_type) this data plane can carry now,
	 * for the Pseudowire Capabilities List a tunnel advertises (and the
	 * ICRQs it accepts); returns the count, at most max.  NULL: the
	 * engine's default (Ethernet, Ethernet VLAN).
	 */
	unsigned (*pw_types)(uint16_t *types, unsigned max);

	/*
	 * Restart handover (src/handover.c).  The old process saves what the
	 * data plane knows of each tunnel and session it hands over (after
	 * the daemon's own record of it); the next process, whose init()
	 * kept every kernel tunnel tunnel_id_kept() names instead of
	 * deleting it as a previous run's, adopts them: the objects are in
	 * the kernel already, nothing is created and no *_dp_done() follows.
	 * adopt returns 0, or -1 when the record is malformed or the object
	 * is not there (the daemon then drops that tunnel).  idle() is true
	 * when no request is on its way to the kernel (the old process execs
	 * or exits only then).  All NULL: nothing to save, adopt or wait for.
	 */
	void (*tunnel_save)(const struct tunnel *t, struct usl_pack *w);
	int (*tunnel_adopt)(struct tunnel *t, struct usl_unpack *r);
	void (*session_save)(const struct session *s, struct usl_pack *w);
	int (*session_adopt)(struct session *s, struct usl_unpack *r);
	bool (*idle)(void);
};

extern const struct dp_ops dp_null_ops;
extern const struct dp_ops dp_kernel_ops;
/* The data plane named name ("null", "kernel"), or NULL. */
const struct dp_ops *dp_find(const char *name);

#endif
