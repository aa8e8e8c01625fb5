/*
 * src/snmp.c - the AgentX subagent: L2TPV3D-MIB served from the daemon's
 * own indexes, on the daemon's own loop.
 *
 * net-snmp is driven, it never drives.  After every call into it we ask
 * snmp_select_info2() which descriptors it wants read and when its next
 * timeout or alarm falls due, and mirror that as usl fd watches and one usl
 * timer: no select(), no agent_check_and_process(), no thread.  Its request
 * timeouts and alarms run from that timer: NETSNMP_DS_LIB_ALARM_DONT_USE_SIG
 * keeps it away from SIGALRM and puts the alarms in its next timeout.
 *
 * One handler answers for all of l2tpv3dObjects with its own OID order:
 * a GET is an exact rbtree lookup, a GETNEXT a lower/upper bound, so every
 * request costs O(log n) whatever the number of tunnels (net-snmp's
 * iterator helper would walk every row for every request).  Each tree's
 * order is the lexicographic order of its rows' index OIDs, which is what
 * makes a bound in the tree the SNMP successor:
 *
 *   tunnels, snmp_config_id off: l2tpd.tunnel_order, index (0, "", CCID);
 *   tunnels, snmp_config_id on:  tunnels_by_peer, index (address type,
 *                                address, config_id);
 *   sessions:                    sessions_by_id, index (CCID, session ID).
 *
 * Reconnection is ours, not net-snmp's: its ping interval would also make
 * it ping the master with a synchronous request, and a master that is
 * stopped (not dead) would then stall the loop for seconds at every ping
 * and every retry.  So no pings: the master going away is seen as the end
 * of the AgentX stream (net-snmp's disconnect callback), and a usl timer
 * retries every SNMP_RETRY_S seconds, at start-up too.
 *
 * net-snmp's AgentX Open and Register are synchronous exchanges: a master
 * that accepts but does not answer (stopped, hung) would stall the loop for
 * the whole wait.  So net-snmp only ever meets a master that has just
 * answered an Open, a Register and a Close on the loop (agentx_probe.c),
 * within SNMP_PROBE_MS; its own start-up open is pointed at a path that
 * does not exist, and the first real attempt is ours.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <linux/sockios.h>

#include "agentx_probe.h"
#include "dp.h"
#include "event.h"
#include "l2tpv3d.h"
#include "usl/log.h"

/* net-snmp-config.h defines its own PACKAGE_VERSION: keep ours first. */
static const char l2tpd_version[] = PACKAGE_VERSION;
#undef PACKAGE_VERSION
#undef PACKAGE_NAME
#undef PACKAGE_STRING
#undef PACKAGE_TARNAME
#undef PACKAGE_BUGREPORT
#undef PACKAGE_URL

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>
#include <net-snmp/agent/net-snmp-agent-includes.h>
#include <net-snmp/agent/agent_callbacks.h>
#include <net-snmp/library/large_fd_set.h>
#pragma GCC diagnostic pop

#define SNMP_APP		"l2tpv3d"
#define SNMP_RETRY_S		5	/* reconnect interval while the master is away */
#define SNMP_TIMEOUT_S		1	/* a synchronous AgentX exchange (open, register) */
#define SNMP_PROBE_MS		1000	/* the rehearsal's deadline (agentx_probe.h) */
/* net-snmp's own open at init_snmp() fails at once on this: the first try is ours */
#define SNMP_NO_SOCKET		"/nonexistent/l2tpv3d-agentx-deferred"
#define SNMP_MAX_FDS		8	/* AgentX socket, callback pipes: a handful */
#define IDX_MAX			24	/* longest row index: type, len, 20 bytes, id */
#define OID_MAX			MAX_OID_LEN	/* 128: any request OID fits */
#define NOTIFY_PER_S		200	/* notifications per second at most */
#define NOTIFY_ROOM		16384	/* send-buffer bytes that must stay free */

/* L2TPV3D-MIB: enterprises.99999 is a placeholder until a PEN is assigned. */
#define MIB_OID			1, 3, 6, 1, 4, 1, 99999
static const oid objects_oid[] = { MIB_OID, 1 };		/* l2tpv3dObjects */
static const oid tunnel_up_oid[] = { MIB_OID, 0, 1 };
static const oid tunnel_down_oid[] = { MIB_OID, 0, 2 };
static const oid snmptrap_oid[] = { 1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0 };
#define OBJECTS_LEN		OID_LENGTH(objects_oid)

/* RFC 4001 InetAddressType */
enum { INET_UNKNOWN = 0, INET_IPV4 = 1, INET_IPV6 = 2, INET_IPV6Z = 4 };
enum { TRUTH_TRUE = 1, TRUTH_FALSE = 2 };

/* l2tpv3dDaemon scalars (l2tpv3dObjects.1.N.0) */
enum {
	DC_VERSION = 1, DC_UPTIME, DC_TUNNELS, DC_TUNNELS_UP, DC_SESSIONS, DC_SESSIONS_UP,
	DC_EVENT_LOOP, DC_DATAPLANE, DC_HOSTNAME, DC_ROUTER_ID, DC_CONFIG_ID, DC_PEERS,
	DC__LAST = DC_PEERS
};

/* l2tpv3dTunnelEntry columns; 1-3 are the not-accessible index */
enum {
	TC_LOCAL_ID = 4, TC_REMOTE_ID, TC_CONFIG_ID, TC_STATE, TC_INITIATED, TC_REMOTE_HOST,
	TC_REMOTE_ROUTER_ID, TC_REMOTE_VENDOR, TC_REMOTE_ADDR_TYPE, TC_REMOTE_ADDR,
	TC_REMOTE_PORT, TC_LOCAL_ADDR_TYPE, TC_LOCAL_ADDR, TC_LOCAL_PORT, TC_ENCAP, TC_NAME,
	TC_UPTIME, TC_SESSIONS, TC_RX_PKTS, TC_RX_ZLB, TC_TX_PKTS, TC_TX_ZLB, TC_RETRANSMITS,
	TC_DROPS, TC_OUT_OF_SEQ, TC_INITIAL_RWS, TC_CURRENT_RWS, TC_RESULT, TC_ERROR,
	TC_ERROR_MSG,
	TC__LAST = TC_ERROR_MSG
};

/* l2tpv3dSessionEntry columns; 1-2 are the not-accessible index */
enum {
	SC_REMOTE_ID = 3, SC_STATE, SC_CALL_TYPE, SC_PW_TYPE, SC_NAME, SC_IFNAME,
	SC_REMOTE_END_ID, SC_COOKIE_LEN, SC_PEER_COOKIE_LEN, SC_UPTIME, SC_COUNTERS_VALID,
	SC_TX_PKTS, SC_TX_OCTETS, SC_TX_ERRORS, SC_RX_PKTS, SC_RX_OCTETS, SC_RX_ERRORS,
	SC_RX_SEQ_DISCARDS, SC_RX_OOS, SC_RX_COOKIE_DISCARDS,
	SC__LAST = SC_RX_COOKIE_DISCARDS
};

enum find_how { FIND_EQ, FIND_GE, FIND_GT };

/* One value on its way to a varbind. */
struct val {
	u_char type;
	long i;				/* ASN_INTEGER */
	u_long u;			/* ASN_UNSIGNED, ASN_TIMETICKS */
	struct counter64 c64;		/* ASN_COUNTER64 */
	const void *str;		/* ASN_OCTET_STR */
	size_t len;
	uint8_t buf[24];		/* addresses */
};

/*
 * A run of columns under one prefix of l2tpv3dObjects whose rows come from
 * an ordered source: the scalar group is a "table" with one row, index 0.
 */
struct region {
	oid prefix[2];
	size_t prefix_len;
	unsigned first_col, last_col;
	const void *(*find)(const oid *idx, size_t len, enum find_how how);
	size_t (*index)(const void *row, oid *out);
	void (*value)(const void *row, unsigned col, struct val *v);
};

struct watch {
	int fd;
	struct usl_fd *ev;
};

static struct {
	bool on;			/* started: the hooks maintain the trees */
	bool by_config_id;		/* tunnel rows by (peer, config_id) */
	bool connected;
	bool told_absent;		/* "not reachable" logged since the last connection */
	bool flush;			/* sockets were closed: their numbers may come back */
	bool reattach;			/* a new session: send it our registration */
	netsnmp_large_fd_set fds;
	struct watch w[SNMP_MAX_FDS];
	unsigned n_watch;
	struct usl_timer timer;		/* net-snmp's next timeout */
	struct usl_timer retry;		/* reconnect while disconnected */
	char socket[CFG_PATH_MAX];
	uint64_t suppressed;		/* notifications not sent (notify_admit) */
} agent;

static struct log_ratelimit notify_limit = LOG_RATELIMIT_INIT(1, NOTIFY_PER_S);
static struct log_ratelimit suppressed_log_limit = LOG_RATELIMIT_INIT(1, 1);

static struct usl_rb_root tunnels_by_peer = USL_RB_ROOT_INIT;
static struct usl_rb_root sessions_by_id = USL_RB_ROOT_INIT;

/* ---- values ------------------------------------------------------------- */

static void val_int(struct val *v, long n)
{
	v->type = ASN_INTEGER;
	v->i = n;
}

static void val_uint(struct val *v, u_char type, uint32_t n)
{
	v->type = type;
	v->u = n;
}

static void val_c64(struct val *v, uint64_t n)
{
	v->type = ASN_COUNTER64;
	v->c64.high = (u_long)(n >> 32);
	v->c64.low = (u_long)(n & 0xffffffffu);
}

static void val_bytes(struct val *v, const void *p, size_t len)
{
	v->type = ASN_OCTET_STR;
	v->str = p ? p : "";
	v->len = p ? len : 0;
}

static void val_str(struct val *v, const char *s)
{
	size_t len = s ? strlen(s) : 0;

	val_bytes(v, s, len > 255 ? 255 : len);	/* SnmpAdminString (SIZE (0..255)) */
}

/* TimeTicks (hundredths of a second) since t, 0 when !up. */
static void val_ticks(struct val *v, bool up, usl_time t)
{
	int64_t ms = usl_time_to_ms(usl_time_sub(usl_timerset_now(l2tpd.timers), t));

	val_uint(v, ASN_TIMETICKS, up && ms > 0 ? (uint32_t)(ms / 10) : 0);
}

/* The value's bytes as net-snmp copies them. */
static const void *val_ptr(const struct val *v, size_t *len)
{
	switch (v->type) {
	case ASN_INTEGER:
		*len = sizeof(v->i);
		return &v->i;
	case ASN_OCTET_STR:
		*len = v->len;
		return v->str;
	case ASN_COUNTER64:
		*len = sizeof(v->c64);
		return &v->c64;
	default:
		*len = sizeof(v->u);
		return &v->u;
	}
}

static void vb_set(netsnmp_variable_list *vb, const struct val *v)
{
	size_t len;
	const void *p = val_ptr(v, &len);

	snmp_set_var_typed_value(vb, v->type, p, len);
}

/* RFC 4001 InetAddressType of sa, and its InetAddress octets in out. */
static int sa_inet(const struct sockaddr *sa, uint8_t *out, size_t *len)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
	uint32_t zone;

	*len = 0;
	if (sa->sa_family == AF_INET) {
		memcpy(out, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		*len = 4;
		return INET_IPV4;
	}
	if (sa->sa_family != AF_INET6)
		return INET_UNKNOWN;
	memcpy(out, &s6->sin6_addr, 16);
	*len = 16;
	if (s6->sin6_scope_id == 0)
		return INET_IPV6;
	zone = htonl(s6->sin6_scope_id);	/* InetAddressIPv6z: address, then zone */
	memcpy(out + 16, &zone, 4);
	*len = 20;
	return INET_IPV6Z;
}

/* ---- the index trees ---------------------------------------------------- */

static int oid_cmp(const oid *a, size_t alen, const oid *b, size_t blen)
{
	return snmp_oid_compare(a, alen, b, blen);
}

/* (type, length, octets...): an InetAddressType, InetAddress index pair. */
static size_t inet_index(const struct sockaddr *sa, oid *out)
{
	uint8_t b[20];
	size_t len, n = 0;

	out[n++] = (oid)sa_inet(sa, b, &len);
	out[n++] = len;
	for (size_t i = 0; i < len; i++)
		out[n++] = b[i];
	return n;
}

static size_t tunnel_index(const void *row, oid *out)
{
	const struct tunnel *t = row;
	size_t n;

	if (!agent.by_config_id) {
		out[0] = INET_UNKNOWN;
		out[1] = 0;
		out[2] = t->id;
		return 3;
	}
	n = inet_index(&t->peer->addr.sa, out);
	out[n++] = t->config_id;
	return n;
}

static size_t session_index(const void *row, oid *out)
{
	const struct session *s = row;

	out[0] = s->tunnel->id;
	out[1] = s->id;
	return 2;
}

/* A search key: an index OID, and how to get a tree node's index OID. */
struct oid_key {
	const oid *idx;
	size_t len;
	const void *(*row)(const struct usl_rb_node *n);
	size_t (*index)(const void *row, oid *out);
};

static int oid_key_cmp(const void *key, const struct usl_rb_node *n)
{
	const struct oid_key *k = key;
	oid buf[IDX_MAX];
	size_t len = k->index(k->row(n), buf);

	return oid_cmp(k->idx, k->len, buf, len);
}

static const struct usl_rb_node *tree_find(const struct usl_rb_root *root,
					   const struct oid_key *k, enum find_how how)
{
	switch (how) {
	case FIND_EQ:
		return usl_rb_find(root, k, oid_key_cmp);
	case FIND_GE:
		return usl_rb_find_ge(root, k, oid_key_cmp);
	case FIND_GT:
		return usl_rb_find_gt(root, k, oid_key_cmp);
	}
	return NULL;
}

static const void *row_by_order(const struct usl_rb_node *n)
{
	return usl_rb_entry(n, struct tunnel, by_order);
}

static const void *row_by_peer(const struct usl_rb_node *n)
{
	return usl_rb_entry(n, struct tunnel, snmp_by_peer);
}

static const void *row_session(const struct usl_rb_node *n)
{
	return usl_rb_entry(n, struct session, snmp_order);
}

/* Tree order = index OID order; ties cannot happen (ids are unique). */
static int by_peer_cmp(const struct usl_rb_node *a, const struct usl_rb_node *b)
{
	oid x[IDX_MAX], y[IDX_MAX];
	size_t xl = tunnel_index(row_by_peer(a), x), yl = tunnel_index(row_by_peer(b), y);

	return oid_cmp(x, xl, y, yl);
}

static int session_cmp(const struct usl_rb_node *a, const struct usl_rb_node *b)
{
	const struct session *x = row_session(a), *y = row_session(b);

	if (x->tunnel->id != y->tunnel->id)
		return x->tunnel->id < y->tunnel->id ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

static const void *tunnel_find_row(const oid *idx, size_t len, enum find_how how)
{
	struct oid_key k = { idx, len, agent.by_config_id ? row_by_peer : row_by_order,
			     tunnel_index };
	const struct usl_rb_node *n;

	n = tree_find(agent.by_config_id ? &tunnels_by_peer : &l2tpd.tunnel_order, &k, how);
	return n ? k.row(n) : NULL;
}

static const void *session_find_row(const oid *idx, size_t len, enum find_how how)
{
	struct oid_key k = { idx, len, row_session, session_index };
	const struct usl_rb_node *n = tree_find(&sessions_by_id, &k, how);

	return n ? row_session(n) : NULL;
}

/* The scalar group: one row, index 0. */
static const void *daemon_find_row(const oid *idx, size_t len, enum find_how how)
{
	static const oid zero[] = { 0 };
	int c = oid_cmp(idx, len, zero, 1);

	if (c == 0 ? how != FIND_GT : (c < 0 && how != FIND_EQ))
		return &l2tpd;
	return NULL;
}

static size_t daemon_index(const void *row, oid *out)
{
	(void)row;
	out[0] = 0;
	return 1;
}

void snmpagent_tunnel_added(struct tunnel *t)
{
	usl_rb_node_clear(&t->snmp_by_peer);
	/* config_id 0: the allocator ran dry; such a tunnel has no row */
	if (agent.on && agent.by_config_id && t->config_id != 0)
		usl_rb_insert(&tunnels_by_peer, &t->snmp_by_peer, by_peer_cmp);
}

void snmpagent_tunnel_removed(struct tunnel *t)
{
	if (agent.on && agent.by_config_id && usl_rb_node_linked(&t->snmp_by_peer))
		usl_rb_erase(&tunnels_by_peer, &t->snmp_by_peer);
}

void snmpagent_session_added(struct session *s)
{
	usl_rb_node_clear(&s->snmp_order);
	if (agent.on)
		usl_rb_insert(&sessions_by_id, &s->snmp_order, session_cmp);
}

void snmpagent_session_removed(struct session *s)
{
	if (agent.on && usl_rb_node_linked(&s->snmp_order))
		usl_rb_erase(&sessions_by_id, &s->snmp_order);
}

/* Tunnels and sessions that exist before the agent starts (one walk, at start). */
static void index_existing(void)
{
	struct usl_rb_node *n;
	struct usl_list *pos;

	for (n = usl_rb_first(&l2tpd.tunnel_order); n != NULL; n = usl_rb_next(n)) {
		struct tunnel *t = usl_rb_entry(n, struct tunnel, by_order);

		snmpagent_tunnel_added(t);
		usl_list_foreach(pos, &t->sessions)
			snmpagent_session_added(usl_container_of(pos, struct session, tunnel_link));
	}
}

/* ---- l2tpv3dDaemon ------------------------------------------------------ */

static void daemon_value(const void *row, unsigned col, struct val *v)
{
	(void)row;
	switch (col) {
	case DC_VERSION:	val_str(v, l2tpd_version); break;
	case DC_UPTIME:		val_ticks(v, true, l2tpd.started); break;
	case DC_TUNNELS:	val_uint(v, ASN_GAUGE, l2tpd.n_tunnels); break;
	case DC_TUNNELS_UP:	val_uint(v, ASN_GAUGE, l2tpd.n_tunnels_up); break;
	case DC_SESSIONS:	val_uint(v, ASN_GAUGE, l2tpd.n_sessions); break;
	case DC_SESSIONS_UP:	val_uint(v, ASN_GAUGE, l2tpd.n_sessions_up); break;
	case DC_EVENT_LOOP:	val_str(v, usl_loop_backend(l2tpd.loop)); break;
	case DC_DATAPLANE:	val_str(v, l2tpd.dp->name); break;
	case DC_HOSTNAME:	val_str(v, l2tpd.hostname); break;
	case DC_ROUTER_ID:	val_uint(v, ASN_UNSIGNED, l2tpd.router_id); break;
	case DC_CONFIG_ID:	val_int(v, agent.by_config_id ? TRUTH_TRUE : TRUTH_FALSE); break;
	case DC_PEERS:		val_uint(v, ASN_GAUGE, usl_hash_count(&l2tpd.peers)); break;
	}
}

/* ---- l2tpv3dTunnelTable ------------------------------------------------- */

/* RFC 3371 l2tpTunnelStatsState: idle, connecting, established, disconnecting. */
static long tunnel_state(const struct tunnel *t)
{
	switch (l2tp_cc_state(t->cc)) {
	case L2TP_CC_IDLE:		return 1;
	case L2TP_CC_WAIT_CTL_REPLY:
	case L2TP_CC_WAIT_CTL_CONN:	return 2;
	case L2TP_CC_ESTABLISHED:	return 3;
	default:			return 4;
	}
}

static uint64_t sum(const uint64_t *a, int from, int to)
{
	uint64_t s = 0;

	for (int i = from; i <= to; i++)
		s += a[i];
	return s;
}

static void tunnel_counter(const struct tunnel *t, unsigned col, struct val *v)
{
	struct l2tp_cc_stats st;

	l2tp_cc_get_stats(t->cc, &st);
	switch (col) {
	case TC_RX_PKTS:	val_c64(v, sum(st.rx_msgs, 0, L2TP_MSG_TYPE_MAX)); break;
	case TC_RX_ZLB:		val_c64(v, st.rx_msgs[L2TP_MSG_ZLB]); break;
	case TC_TX_PKTS:	val_c64(v, sum(st.tx_msgs, 0, L2TP_MSG_TYPE_MAX)); break;
	case TC_TX_ZLB:		val_c64(v, st.tx_msgs[L2TP_MSG_ZLB]); break;
	case TC_RETRANSMITS:	val_c64(v, st.retransmits); break;
	case TC_DROPS:		val_c64(v, sum(st.drops, 1, L2TP_DROP__COUNT - 1)); break;
	case TC_OUT_OF_SEQ:	val_c64(v, st.rx_held + st.rx_duplicates); break;
	case TC_INITIAL_RWS:	val_uint(v, ASN_GAUGE, st.peer_rx_window); break;
	case TC_CURRENT_RWS:	val_uint(v, ASN_GAUGE, st.cwnd); break;
	}
}

/* Result Code AVP of the StopCCN (RFC 3371 l2tpTunnelStatsLast*); zero until there is one. */
static void result_value(const struct l2tp_result *r, unsigned col, struct val *v)
{
	switch (col) {
	case TC_RESULT:
		val_uint(v, ASN_UNSIGNED, r ? r->result : 0);
		break;
	case TC_ERROR:
		val_uint(v, ASN_UNSIGNED, r && r->has_error ? r->error : 0);
		break;
	case TC_ERROR_MSG:
		val_bytes(v, r ? r->message.p : NULL, r ? r->message.len : 0);
		break;
	}
}

static void addr_value(const union saddr *a, bool type, struct val *v)
{
	size_t len;
	int t = sa_inet(&a->sa, v->buf, &len);

	if (type)
		val_int(v, t);
	else
		val_bytes(v, v->buf, len);
}

static void tunnel_peer_value(const struct tunnel *t, unsigned col, struct val *v)
{
	switch (col) {
	case TC_REMOTE_HOST:	 val_str(v, l2tp_cc_peer_host_name(t->cc)); break;
	case TC_REMOTE_ROUTER_ID: val_uint(v, ASN_UNSIGNED, l2tp_cc_peer_router_id(t->cc)); break;
	case TC_REMOTE_VENDOR:	 val_str(v, l2tp_cc_peer_vendor_name(t->cc)); break;
	case TC_REMOTE_ADDR_TYPE: addr_value(&t->remote, true, v); break;
	case TC_REMOTE_ADDR:	 addr_value(&t->remote, false, v); break;
	case TC_REMOTE_PORT:
		val_uint(v, ASN_UNSIGNED, sockaddr_port(&t->remote.sa));
		break;
	case TC_LOCAL_ADDR_TYPE: addr_value(&t->local, true, v); break;
	case TC_LOCAL_ADDR:	 addr_value(&t->local, false, v); break;
	case TC_LOCAL_PORT:
		val_uint(v, ASN_UNSIGNED, sockaddr_port(&t->local.sa));
		break;
	}
}

static void tunnel_value(const void *row, unsigned col, struct val *v)
{
	const struct tunnel *t = row;

	switch (col) {
	case TC_LOCAL_ID:	val_uint(v, ASN_UNSIGNED, t->id); break;
	case TC_REMOTE_ID:	val_uint(v, ASN_UNSIGNED, l2tp_cc_peer_ccid(t->cc)); break;
	case TC_CONFIG_ID:	val_uint(v, ASN_UNSIGNED, t->config_id); break;
	case TC_STATE:		val_int(v, tunnel_state(t)); break;
	case TC_INITIATED:	val_int(v, l2tp_cc_is_initiator(t->cc) ? 1 : 2); break;
	case TC_ENCAP:		val_int(v, t->encap == L2TP_ENCAP_IP ? 2 : 1); break;
	case TC_NAME:		val_str(v, t->name); break;
	case TC_UPTIME:		val_ticks(v, t->up, t->established); break;
	case TC_SESSIONS:	val_uint(v, ASN_GAUGE, t->n_sessions); break;
	case TC_RESULT:
	case TC_ERROR:
	case TC_ERROR_MSG:	result_value(l2tp_cc_close_reason(t->cc), col, v); break;
	default:
		if (col >= TC_RX_PKTS && col <= TC_CURRENT_RWS)
			tunnel_counter(t, col, v);
		else
			tunnel_peer_value(t, col, v);
		break;
	}
}

/* ---- l2tpv3dSessionTable ------------------------------------------------ */

/* RFC 3371 l2tpSessionStatsState. */
static long session_state(const struct l2tp_sess *ls)
{
	switch (ls ? l2tp_sess_state(ls) : L2TP_SESS_CLOSED) {
	case L2TP_SESS_IDLE:		return 1;
	case L2TP_SESS_ESTABLISHED:	return 3;
	case L2TP_SESS_CLOSED:		return 4;
	default:			return 2;
	}
}

/* RFC 3371 l2tpSessionStatsCallType: who sent ICRQ/OCRQ, read as LAC/LNS roles. */
static long session_call_type(const struct l2tp_sess *ls)
{
	bool init = l2tp_sess_is_initiator(ls), out = l2tp_sess_is_outgoing(ls);

	if (!out)
		return init ? 1 : 2;	/* lacIncoming, lnsIncoming */
	return init ? 4 : 3;		/* lnsOutgoing, lacOutgoing */
}

static void session_counter(const struct session *s, unsigned col, struct val *v)
{
	struct dp_session_stats st;
	bool ok = l2tpd.dp->session_stats(s, &st) == 0;

	if (!ok)
		memset(&st, 0, sizeof(st));
	switch (col) {
	case SC_COUNTERS_VALID:	val_int(v, ok ? TRUTH_TRUE : TRUTH_FALSE); break;
	case SC_TX_PKTS:	val_c64(v, st.tx_packets); break;
	case SC_TX_OCTETS:	val_c64(v, st.tx_bytes); break;
	case SC_TX_ERRORS:	val_c64(v, st.tx_errors); break;
	case SC_RX_PKTS:	val_c64(v, st.rx_packets); break;
	case SC_RX_OCTETS:	val_c64(v, st.rx_bytes); break;
	case SC_RX_ERRORS:	val_c64(v, st.rx_errors); break;
	case SC_RX_SEQ_DISCARDS: val_c64(v, st.rx_seq_discards); break;
	case SC_RX_OOS:		val_c64(v, st.rx_oos_packets); break;
	case SC_RX_COOKIE_DISCARDS: val_c64(v, st.rx_cookie_discards); break;
	}
}

/* Columns that need the engine's session (NULL only while it is being freed). */
static void session_proto_value(const struct l2tp_sess *ls, unsigned col, struct val *v)
{
	uint8_t clen = 0;
	uint16_t rlen = 0;
	const uint8_t *p = NULL;

	switch (col) {
	case SC_REMOTE_ID:	val_uint(v, ASN_UNSIGNED, ls ? l2tp_sess_remote_sid(ls) : 0);
		break;
	case SC_CALL_TYPE:	val_int(v, ls ? session_call_type(ls) : 1); break;
	case SC_PW_TYPE:	val_uint(v, ASN_UNSIGNED, ls ? l2tp_sess_pw_type(ls) : 0); break;
	case SC_COOKIE_LEN:
		if (ls)
			l2tp_sess_cookie(ls, &clen);
		val_uint(v, ASN_UNSIGNED, clen);
		break;
	case SC_PEER_COOKIE_LEN:
		if (ls)
			l2tp_sess_peer_cookie(ls, &clen);
		val_uint(v, ASN_UNSIGNED, clen);
		break;
	case SC_REMOTE_END_ID:
		if (ls)
			p = l2tp_sess_remote_end_id(ls, &rlen);
		val_bytes(v, p, rlen);
		break;
	}
}

static void session_value(const void *row, unsigned col, struct val *v)
{
	const struct session *s = row;

	switch (col) {
	case SC_STATE:		val_int(v, session_state(s->sess)); break;
	case SC_NAME:		val_str(v, s->name); break;
	case SC_IFNAME:		val_str(v, s->ifname); break;
	case SC_UPTIME:		val_ticks(v, s->up, s->established); break;
	default:
		if (col >= SC_COUNTERS_VALID)
			session_counter(s, col, v);
		else
			session_proto_value(s->sess, col, v);
		break;
	}
}

/* ---- the handler: OID order over the regions ---------------------------- */

static const struct region regions[] = {
	{ { 1 }, 1, DC_VERSION, DC__LAST, daemon_find_row, daemon_index, daemon_value },
	{ { 2, 1 }, 2, TC_LOCAL_ID, TC__LAST, tunnel_find_row, tunnel_index, tunnel_value },
	{ { 3, 1 }, 2, SC_REMOTE_ID, SC__LAST, session_find_row, session_index, session_value },
};
#define N_REGIONS	(sizeof(regions) / sizeof(regions[0]))
#define TUNNEL_REGION	(&regions[1])

static size_t region_base(const struct region *r, oid *out)
{
	memcpy(out, objects_oid, sizeof(objects_oid));
	memcpy(out + OBJECTS_LEN, r->prefix, r->prefix_len * sizeof(oid));
	return OBJECTS_LEN + r->prefix_len;
}

/* The full OID and value of (col, row) in r. */
static size_t region_instance(const struct region *r, unsigned col, const void *row, oid *out,
			      struct val *v)
{
	size_t n = region_base(r, out);

	out[n++] = col;
	n += r->index(row, out + n);
	r->value(row, col, v);
	return n;
}

/*
 * The first instance of r after name (or at it, when inclusive): the rest
 * of name's column in index order, else the first row of the next column.
 * Returns its OID length, 0 when r has nothing after name.
 */
static size_t region_next(const struct region *r, const oid *name, size_t len, bool inclusive,
			  oid *out, struct val *v)
{
	oid base[OID_MAX];
	size_t bl = region_base(r, base), n = len < bl ? len : bl;
	int c = oid_cmp(name, n, base, n);
	unsigned col = r->first_col;
	const void *row = NULL;

	if (c > 0)
		return 0;
	if (c == 0 && len > bl) {
		if (name[bl] > r->last_col)
			return 0;
		if (name[bl] >= r->first_col) {
			col = (unsigned)name[bl];
			row = r->find(name + bl + 1, len - bl - 1, inclusive ? FIND_GE : FIND_GT);
			if (row == NULL)
				col++;
		}
	}
	if (row == NULL) {
		if (col > r->last_col || (row = r->find(NULL, 0, FIND_GE)) == NULL)
			return 0;
	}
	return region_instance(r, col, row, out, v);
}

/* 0, or SNMP_NOSUCHOBJECT / SNMP_NOSUCHINSTANCE. */
static int region_get(const struct region *r, const oid *name, size_t len, struct val *v)
{
	oid base[OID_MAX];
	size_t bl = region_base(r, base);
	const void *row;

	if (len <= bl || oid_cmp(name, bl, base, bl) != 0 ||
	    name[bl] < r->first_col || name[bl] > r->last_col)
		return SNMP_NOSUCHOBJECT;
	row = r->find(name + bl + 1, len - bl - 1, FIND_EQ);
	if (row == NULL)
		return SNMP_NOSUCHINSTANCE;
	r->value(row, (unsigned)name[bl], v);
	return 0;
}

/*
 * The request's OID with every sub-identifier cut to 32 bits: net-snmp's
 * AgentX decoding sign-extends sub-identifiers above 2^31 into its 64-bit
 * oid type, which would sort them after every row.  0 when too long.
 */
static size_t request_oid(const netsnmp_variable_list *vb, oid *out)
{
	if (vb->name_length > OID_MAX)
		return 0;
	for (size_t i = 0; i < vb->name_length; i++)
		out[i] = vb->name[i] & 0xffffffffu;
	return vb->name_length;
}

static void answer_get(netsnmp_agent_request_info *ri, netsnmp_request_info *req)
{
	int err = SNMP_NOSUCHOBJECT;
	struct val v = { 0 };
	oid name[OID_MAX];
	size_t len = request_oid(req->requestvb, name);

	for (size_t i = 0; i < N_REGIONS && err == SNMP_NOSUCHOBJECT; i++)
		err = region_get(&regions[i], name, len, &v);
	if (err == 0)
		vb_set(req->requestvb, &v);
	else
		netsnmp_set_request_error(ri, req, err);
}

/* Nothing after it in our subtree: leave the varbind alone, net-snmp moves on. */
static void answer_getnext(netsnmp_request_info *req)
{
	oid name[OID_MAX], out[OID_MAX];
	size_t len = request_oid(req->requestvb, name), n = 0;
	struct val v = { 0 };

	for (size_t i = 0; i < N_REGIONS && n == 0; i++)
		n = region_next(&regions[i], name, len, req->inclusive, out, &v);
	if (n == 0)
		return;
	snmp_set_var_objid(req->requestvb, out, n);
	vb_set(req->requestvb, &v);
}

static int mib_handler(netsnmp_mib_handler *handler, netsnmp_handler_registration *reg,
		       netsnmp_agent_request_info *ri, netsnmp_request_info *req)
{
	(void)handler;
	(void)reg;
	for (; req != NULL; req = req->next) {
		if (req->processed)
			continue;
		switch (ri->mode) {
		case MODE_GET:
			answer_get(ri, req);
			break;
		case MODE_GETNEXT:
			answer_getnext(req);
			break;
		default:
			netsnmp_set_request_error(ri, req, SNMP_ERR_NOTWRITABLE);
			break;
		}
	}
	return SNMP_ERR_NOERROR;
}

/* ---- notifications ------------------------------------------------------ */

/* True when every socket of net-snmp's has NOTIFY_ROOM bytes free to send. */
static bool agentx_has_room(void)
{
	for (unsigned i = 0; i < agent.n_watch; i++) {
		int queued, sndbuf;
		socklen_t len = sizeof(sndbuf);

		if (getsockopt(agent.w[i].fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len) < 0)
			continue;		/* not a socket (net-snmp's pipes) */
		if (ioctl(agent.w[i].fd, SIOCOUTQ, &queued) < 0)
			continue;
		if (queued + NOTIFY_ROOM > sndbuf)
			return false;
	}
	return true;
}

/*
 * net-snmp sends a notification with a blocking write on the AgentX
 * stream.  When 10,000 tunnels come up in a second, a notification each
 * would fill that socket while snmpd is busy; the write would then stall
 * the daemon, and snmpd, waiting for us to read its responses, would never
 * drain it: a deadlock.  So notifications pass the log's rate limiter
 * (NOTIFY_PER_S a second) and are sent only while the socket has room; the
 * others are counted as suppressed (and logged at most once a second),
 * never queued: a storm's state is in the tables, not the traps.
 */
static bool notify_admit(void)
{
	usl_time now = usl_timerset_now(l2tpd.timers);
	unsigned dropped;

	if (log_ratelimit_admit(&notify_limit, now, &dropped) && agentx_has_room())
		return true;
	agent.suppressed++;
	log_warnx_rl(&suppressed_log_limit, now, "snmp: notifications suppressed (more than %d/s, "
		     "or snmpd not keeping up): %llu in all", NOTIFY_PER_S,
		     (unsigned long long)agent.suppressed);
	return false;
}

static void notify_tunnel(const oid *trap, size_t trap_len, const struct tunnel *t,
			  const unsigned *cols, size_t n_cols, const struct l2tp_result *why)
{
	const struct region *r = TUNNEL_REGION;
	netsnmp_variable_list *vl = NULL;
	oid name[OID_MAX];
	struct val v;

	if (!agent.on || !agent.connected || !notify_admit())
		return;
	snmp_varlist_add_variable(&vl, snmptrap_oid, OID_LENGTH(snmptrap_oid), ASN_OBJECT_ID,
				  trap, trap_len * sizeof(oid));
	for (size_t i = 0; i < n_cols; i++) {
		size_t len, vlen;
		const void *p;

		memset(&v, 0, sizeof(v));
		len = region_instance(r, cols[i], t, name, &v);
		if (cols[i] >= TC_RESULT)
			result_value(why, cols[i], &v);	/* the reason now, not a stale one */
		p = val_ptr(&v, &vlen);
		snmp_varlist_add_variable(&vl, name, len, v.type, p, vlen);
	}
	send_v2trap(vl);
	snmp_free_varbind(vl);
}

void snmpagent_notify_tunnel_up(const struct tunnel *t)
{
	static const unsigned cols[] = { TC_LOCAL_ID, TC_REMOTE_ID, TC_REMOTE_ADDR_TYPE,
		TC_REMOTE_ADDR, TC_REMOTE_HOST, TC_STATE };

	notify_tunnel(tunnel_up_oid, OID_LENGTH(tunnel_up_oid), t, cols,
		      sizeof(cols) / sizeof(cols[0]), NULL);
}

void snmpagent_notify_tunnel_down(const struct tunnel *t, const struct l2tp_result *why)
{
	static const unsigned cols[] = { TC_LOCAL_ID, TC_REMOTE_ID, TC_REMOTE_ADDR_TYPE,
		TC_REMOTE_ADDR, TC_REMOTE_HOST, TC_STATE, TC_RESULT, TC_ERROR, TC_ERROR_MSG };

	notify_tunnel(tunnel_down_oid, OID_LENGTH(tunnel_down_oid), t, cols,
		      sizeof(cols) / sizeof(cols[0]), why);
}

/* ---- driving net-snmp from the loop ------------------------------------- */

static void agent_sync(void);

static void agent_on_read(int fd, short what, void *arg)
{
	(void)what;
	(void)arg;
	NETSNMP_LARGE_FD_ZERO(&agent.fds);
	NETSNMP_LARGE_FD_SET(fd, &agent.fds);
	snmp_read2(&agent.fds);
	netsnmp_check_outstanding_agent_requests();
	agent_sync();
}

static void agent_on_timer(struct usl_timer *t)
{
	(void)t;
	snmp_timeout();
	run_alarms();
	netsnmp_check_outstanding_agent_requests();
	agent_sync();
}

static void unwatch(unsigned i)
{
	usl_fd_del(agent.w[i].ev);
	agent.w[i] = agent.w[--agent.n_watch];
}

static bool watched(int fd)
{
	for (unsigned i = 0; i < agent.n_watch; i++)
		if (agent.w[i].fd == fd)
			return true;
	return false;
}

static void watch(int fd)
{
	struct usl_fd *ev;

	if (agent.n_watch == SNMP_MAX_FDS) {
		log_warnx("snmp: net-snmp wants more than %d descriptors; fd %d ignored",
			  SNMP_MAX_FDS, fd);
		return;
	}
	ev = usl_fd_add(l2tpd.loop, fd, USL_READ, agent_on_read, NULL);
	if (ev == NULL) {
		log_warnx("snmp: cannot watch fd %d", fd);
		return;
	}
	agent.w[agent.n_watch++] = (struct watch){ fd, ev };
}

/* Adds a watch for every descriptor in the set not yet watched (word by word: fds run high). */
static void watch_new(int numfds)
{
	const fd_mask *words = __FDS_BITS(agent.fds.lfs_setptr);

	for (int w = 0; w * NFDBITS < numfds; w++) {
		fd_mask m = words[w];

		while (m != 0) {
			int fd = w * NFDBITS + __builtin_ctzl((unsigned long)m);

			m &= m - 1;
			if (fd < numfds && !watched(fd))
				watch(fd);
		}
	}
}

/* Mirrors what net-snmp waits for (descriptors, next timeout) into the loop. */
static void agent_sync(void)
{
	struct timeval tv = { 0, 0 };
	int numfds = 0, block = 1;

	if (agent.reattach) {
		/* registrations made before the session (all of ours) go to it now */
		agent.reattach = false;
		register_mib_reattach();
	}
	NETSNMP_LARGE_FD_ZERO(&agent.fds);
	snmp_select_info2(&numfds, &agent.fds, &tv, &block);
	if (agent.flush) {
		/* a closed socket leaves epoll by itself; a reused number must be added anew */
		while (agent.n_watch > 0)
			unwatch(0);
		agent.flush = false;
	}
	for (unsigned i = 0; i < agent.n_watch;) {
		if (NETSNMP_LARGE_FD_ISSET(agent.w[i].fd, &agent.fds))
			i++;
		else
			unwatch(i);
	}
	watch_new(numfds);
	if (block)
		usl_timer_cancel(&agent.timer);
	else
		usl_timer_arm(l2tpd.timers, &agent.timer,
			      usl_time_ns((int64_t)tv.tv_sec * 1000000000 + tv.tv_usec * 1000));
}

/* AgentX session opened or lost (net-snmp's index start/stop callbacks). */
static int agent_on_session(int major, int minor, void *server, void *client)
{
	(void)major;
	(void)server;
	(void)client;
	agent.flush = true;
	agent.connected = minor == SNMPD_CALLBACK_INDEX_START;
	agent.reattach = agent.connected;
	if (!agent.connected) {
		log_warnx("snmp: AgentX master %s went away; reconnecting every %d s", agent.socket,
			  SNMP_RETRY_S);
		agent.told_absent = true;
		usl_timer_arm(l2tpd.timers, &agent.retry, usl_time_s(SNMP_RETRY_S));
	}
	return 0;
}

/*
 * Not in net-snmp's installed headers, but exported by libnetsnmpagent
 * (agent/mibgroup/agentx/subagent.h): what its own ping-driven reconnect
 * calls.  Returns 0 once the AgentX session is open.
 */
int subagent_open_master_session(void);

static void agent_retry_later(const char *why)
{
	if (!agent.told_absent)
		log_info("snmp: AgentX master %s not reachable yet (%s); retrying every %d s",
			 agent.socket, why, SNMP_RETRY_S);
	else
		log_debug("snmp: AgentX master %s: %s", agent.socket, why);
	agent.told_absent = true;
	usl_timer_arm(l2tpd.timers, &agent.retry, usl_time_s(SNMP_RETRY_S));
}

/* The master has just answered on the loop: net-snmp's synchronous open is safe now. */
static void agent_on_probe(bool ok, const char *why, void *arg)
{
	(void)arg;
	if (ok && !agent.connected)
		subagent_open_master_session();
	agent_sync();	/* registers (reattach) and watches the new session */
	if (agent.connected)
		agent.told_absent = false;
	else
		agent_retry_later(ok ? "the AgentX session did not open" : why);
}

static void agent_connect(void)
{
	uint32_t sub[OID_LENGTH(objects_oid)];

	if (agent.connected)
		return;
	if (!axprobe_supported(agent.socket)) {
		/* a name to resolve: net-snmp's blocking open, bounded by SNMP_TIMEOUT_S */
		agent_on_probe(true, NULL, NULL);
		return;
	}
	for (size_t i = 0; i < OBJECTS_LEN; i++)
		sub[i] = (uint32_t)objects_oid[i];
	if (axprobe_start(agent.socket, sub, OBJECTS_LEN, SNMP_PROBE_MS, agent_on_probe, NULL) < 0)
		agent_retry_later(strerror(errno));
}

static void agent_on_retry(struct usl_timer *t)
{
	(void)t;
	agent_connect();
}

static int agent_on_log(int major, int minor, void *server, void *client)
{
	const struct snmp_log_message *m = server;
	int len = (int)strcspn(m->msg, "\n");

	(void)major;
	(void)minor;
	(void)client;
	if (len == 0)
		return 0;
	/* "... not reconnecting": true of net-snmp, not of us (agent_on_retry) */
	if (strncmp(m->msg, "AgentX master disconnected us", 29) == 0)
		log_debug("snmp: %.*s", len, m->msg);
	else if (m->priority <= LOG_WARNING)
		log_warnx("snmp: %.*s", len, m->msg);
	else if (m->priority <= LOG_INFO)
		log_info("snmp: %.*s", len, m->msg);
	else
		log_debug("snmp: %.*s", len, m->msg);
	return 0;
}

/* net-snmp as a quiet library: no config files, no state files, no SIGALRM. */
static void agent_defaults(const struct l2tpd_config *c)
{
	snmp_register_callback(SNMP_CALLBACK_LIBRARY, SNMP_CALLBACK_LOGGING, agent_on_log, NULL);
	snmp_enable_calllog();
	netsnmp_ds_set_boolean(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_ROLE, 1);
	netsnmp_ds_set_string(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_X_SOCKET,
			      c->snmp.agentx_socket);
	netsnmp_ds_set_int(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_TIMEOUT, SNMP_TIMEOUT_S);
	netsnmp_ds_set_int(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_RETRIES, 0);
	/* one line when the state changes (ours), not one per retry (theirs) */
	netsnmp_ds_set_boolean(NETSNMP_DS_APPLICATION_ID,
			       NETSNMP_DS_AGENT_NO_CONNECTION_WARNINGS, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_ALARM_DONT_USE_SIG, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_PERSIST_STATE, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_LOAD, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_SAVE, 1);
	snmp_register_callback(SNMP_CALLBACK_APPLICATION, SNMPD_CALLBACK_INDEX_START,
			       agent_on_session, NULL);
	snmp_register_callback(SNMP_CALLBACK_APPLICATION, SNMPD_CALLBACK_INDEX_STOP,
			       agent_on_session, NULL);
}

static int agent_register(void)
{
	netsnmp_handler_registration *reg;

	reg = netsnmp_create_handler_registration("l2tpv3dObjects", mib_handler, objects_oid,
						  OBJECTS_LEN, HANDLER_CAN_RONLY);
	if (reg == NULL || netsnmp_register_handler(reg) != MIB_REGISTERED_OK)
		return -1;
	return 0;
}

/*
 * init_snmp() parses the default MIB modules; a subagent needs none, and
 * on hosts without the IETF MIB files every missing one is a log line.
 * An empty MIBS for the duration of the call loads nothing.
 */
static void init_snmp_without_mibs(void)
{
	const char *env = getenv("MIBS");
	char *saved = env ? strdup(env) : NULL;

	setenv("MIBS", "", 1);
	init_snmp(SNMP_APP);	/* opens the AgentX session, or schedules retries */
	if (saved != NULL)
		setenv("MIBS", saved, 1);
	else
		unsetenv("MIBS");
	free(saved);
}

/* SNMP's subscription: tunnel up and down notifications. */
static void agent_on_event(const struct l2tpd_event *ev, void *arg)
{
	(void)arg;
	if (ev->kind == EV_TUNNEL_UP)
		snmpagent_notify_tunnel_up(ev->t);
	else if (ev->kind == EV_TUNNEL_DOWN)
		snmpagent_notify_tunnel_down(ev->t, ev->why);
}

int snmpagent_init(const struct l2tpd_config *c)
{
	if (!c->snmp.enabled || agent.on)
		return 0;
	if (event_subscribe(agent_on_event, NULL) < 0)
		return -1;
	agent.on = true;
	agent.by_config_id = c->snmp_config_id;
	snprintf(agent.socket, sizeof(agent.socket), "%s", c->snmp.agentx_socket);
	index_existing();
	agent_defaults(c);
	if (init_agent(SNMP_APP) != 0 || agent_register() < 0) {
		log_warnx("snmp: cannot set up the net-snmp agent library; SNMP disabled");
		agent.on = false;	/* the trees stay as they are, unread */
		event_unsubscribe(agent_on_event, NULL);
		return -1;
	}
	/* init_agent() sets a 15 s default; 0: no pings, no reconnect of its own */
	netsnmp_ds_set_int(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_AGENTX_PING_INTERVAL, 0);
	netsnmp_large_fd_set_init(&agent.fds, FD_SETSIZE);
	usl_timer_init(&agent.timer, agent_on_timer);
	usl_timer_init(&agent.retry, agent_on_retry);
	netsnmp_ds_set_string(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_X_SOCKET, SNMP_NO_SOCKET);
	init_snmp_without_mibs();
	netsnmp_ds_set_string(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_X_SOCKET, agent.socket);
	agent_sync();
	agent_connect();
	return 0;
}

void snmpagent_shutdown(void)
{
	if (!agent.on)
		return;
	axprobe_cancel();
	snmp_shutdown(SNMP_APP);	/* AgentX Close to the master */
	while (agent.n_watch > 0)
		unwatch(0);
	usl_timer_cancel(&agent.timer);
	usl_timer_cancel(&agent.retry);
	netsnmp_large_fd_set_cleanup(&agent.fds);
	event_unsubscribe(agent_on_event, NULL);
	agent.on = false;
}
