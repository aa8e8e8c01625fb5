/*
 * src/dp_kernel.c - the Linux kernel data plane: the "l2tp" generic
 * netlink family, driven asynchronously through libmnl.
 *
 * Objects.  struct ktunnel / struct ksession are this file's state behind
 * t->dp_priv / s->dp_priv.  The engine may delete an object while its
 * create is unanswered ("cancel"): the answer then decides - a create that
 * worked is deleted at once, one that never left the queue is dropped
 * unsent, and the done function is never called after a cancel.  A failed
 * create leaves no kernel object and owes no delete (cc.h, sess.h).
 *
 * The pieces, dp_kernel_int.h what they share:
 *   dp_kernel_nl.c         requests, answers, resync, the family, the sockets
 *   dp_kernel_owned.c      the state file, the start-up cleanup
 *   dp_kernel_stats.c      counters, modify, describe
 *   dp_kernel_lost.c       objects deleted behind our back (dp_watch.c)
 *   dp_kernel_handover.c   the restart handover
 *   dp_kernel.c            tunnels, sessions, start-up and shut-down, the dp_ops
 *
 * What is programmed and why (L2SPEC, checksums, names, MTU) is in
 * doc/kernel-dataplane.md.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>
#include <libmnl/libmnl.h>
#include <linux/l2tp.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "child.h"
#include "dp.h"
#include "dp_kernel_int.h"
#include "dp_state.h"
#include "dp_watch.h"
#include "l2tpv3d.h"
#include "link.h"
#include "usl/log.h"

struct kdp_state kdp = { .gnl.fd = -1, .rtnl.fd = -1, .dump.fd = -1, .rec.fd = -1,
			 .lock_fd = -1 };

/* ---- tunnels --------------------------------------------------------------- */

/* The kernel says "no such object" with ENODEV (l2tp_netlink.c), some paths ENOENT. */
bool gone(int err)
{
	return err == -ENODEV || err == -ENOENT;
}

void log_kernel_error(const char *what, uint32_t id, const char *cmd, int err,
		      const char *ext)
{
	log_warnx("%s %u: kernel %s: %s%s%s", what, id, cmd, strerror(-err), ext ? ": " : "",
		  ext ? ext : "");
}

static void tunnel_delete_done(struct kreq *r, int err, const char *ext)
{
	struct ktunnel *kt = r->obj;

	kt->req = NULL;
	/* gone already: closing our socket took it (l2tp.rst, "Tunnel Sockets") */
	if (err != 0 && !gone(err))
		log_kernel_error("tunnel", kt->id, "TUNNEL_DELETE", err, ext);
	record_del(kt);
}

void tunnel_send_delete(struct ktunnel *kt)
{
	struct nlmsghdr *nlh = l2tp_msg(L2TP_CMD_TUNNEL_DELETE, NLM_F_ACK);

	mnl_attr_put_u32(nlh, L2TP_ATTR_CONN_ID, kt->id);
	kt->state = K_DELETING;
	kt->req = kreq_submit(nlh, kt, tunnel_delete_done, NULL);
	if (kt->req == NULL)	/* stays recorded: the next start deletes it */
		log_warnx("tunnel %u: kernel tunnel delete: out of memory", kt->id);
}

static void tunnel_create_done(struct kreq *r, int err, const char *ext)
{
	struct ktunnel *kt = r->obj;
	struct tunnel *t = kt->t;

	kt->req = NULL;
	if (t == NULL) {		/* cancelled while the kernel worked */
		if (err == 0)
			tunnel_send_delete(kt);
		else
			record_del(kt);
		return;
	}
	if (err != 0) {
		log_kernel_error("tunnel", kt->id, "TUNNEL_CREATE", err, ext);
		text_set(&t->dp_error, "kernel refused the tunnel: %s%s%s",
			 strerror(-err), ext ? ": " : "", ext ? ext : "");
		t->dp_priv = NULL;
		record_del(kt);
		tunnel_dp_done(t, err);
		return;
	}
	kt->state = K_UP;
	tunnel_dp_done(t, 0);
}

/*
 * One socket carries both the control messages we send and the kernel's
 * data packets, and RFC 3931 wants checksums on control messages over UDP:
 * SO_NO_CHECK / UDP_NO_CHECK6_* stay (explicitly) off, so data is
 * checksummed too.  IP encapsulation has no UDP checksum to choose.
 */
static int tunnel_sock_prepare(const struct tunnel *t)
{
	int zero = 0;

	if (t->encap != L2TP_ENCAP_UDP)
		return 0;
	if (t->remote.sa.sa_family == AF_INET6) {
		if (setsockopt(t->fd, IPPROTO_UDP, UDP_NO_CHECK6_TX, &zero, sizeof(zero)) < 0 ||
		    setsockopt(t->fd, IPPROTO_UDP, UDP_NO_CHECK6_RX, &zero, sizeof(zero)) < 0)
			return -errno;
		return 0;
	}
	return setsockopt(t->fd, SOL_SOCKET, SO_NO_CHECK, &zero, sizeof(zero)) < 0 ? -errno : 0;
}

static struct nlmsghdr *tunnel_create_msg(const struct tunnel *t)
{
	struct nlmsghdr *nlh = l2tp_msg(L2TP_CMD_TUNNEL_CREATE, NLM_F_ACK);

	mnl_attr_put_u32(nlh, L2TP_ATTR_CONN_ID, t->id);
	mnl_attr_put_u32(nlh, L2TP_ATTR_PEER_CONN_ID, l2tp_cc_peer_ccid(t->cc));
	mnl_attr_put_u8(nlh, L2TP_ATTR_PROTO_VERSION, 3);
	mnl_attr_put_u16(nlh, L2TP_ATTR_ENCAP_TYPE,
			 t->encap == L2TP_ENCAP_IP ? L2TP_ENCAPTYPE_IP : L2TP_ENCAPTYPE_UDP);
	mnl_attr_put_u32(nlh, L2TP_ATTR_FD, (uint32_t)t->fd);	/* managed: our socket */
	return nlh;
}

static int kernel_tunnel_create(struct tunnel *t)
{
	struct ktunnel *kt;
	int rc;

	rc = tunnel_sock_prepare(t);
	if (rc != 0)
		return rc;
	kt = ktunnel_new(t->id, K_CREATING);
	if (kt == NULL)
		return -ENOMEM;
	kt->t = t;
	kt->req = kreq_submit(tunnel_create_msg(t), kt, tunnel_create_done, NULL);
	if (kt->req == NULL) {
		free(kt);
		return -ENOMEM;
	}
	record_add(kt);
	t->dp_priv = kt;
	return 0;
}

/*
 * The engine deletes a tunnel's sessions just before the tunnel; the
 * TUNNEL_DELETE takes them all in the kernel's work queue, so session
 * deletes still queued are settled here unsent instead of unregistering
 * each interface inside our sendmsg.
 */
static void drop_session_deletes(struct ktunnel *kt)
{
	while (!usl_list_empty(&kt->sess_dels)) {
		struct kreq *r = usl_list_first_entry(&kt->sess_dels, struct kreq, tlink);

		usl_list_del(&r->qlink);
		usl_list_del(&r->tlink);
		r->done(r, 0, NULL);
		free(r);
	}
}

static void kernel_tunnel_delete(struct tunnel *t)
{
	struct ktunnel *kt = t->dp_priv;

	t->dp_priv = NULL;
	if (kt == NULL)
		return;
	kt->t = NULL;
	drop_session_deletes(kt);
	if (kt->state == K_GONE)
		record_del(kt);
	else if (kt->state != K_CREATING)
		tunnel_send_delete(kt);
	else if (kt->req != NULL && kt->req->queued) {
		/* never sent: no kernel object, and the fd it names may be reused */
		kreq_unqueue(kt->req);
		record_del(kt);
	}
	/* else: sent; its answer decides (tunnel_create_done) */
}

/* The negotiated pseudowire type (a peer's ICRQ may ask for another than our profile's). */
uint16_t sess_pw(const struct session *s)
{
	return l2tp_sess_pw_type(s->sess);
}

/* ---- sessions: names and MTU ------------------------------------------------- */

struct name_ctr *name_counter(const char *pattern)
{
	struct name_ctr *c;

	for (c = kdp.names; c != NULL; c = c->next)
		if (strcmp(c->pattern, pattern) == 0)
			return c;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	snprintf(c->pattern, sizeof(c->pattern), "%s", pattern);
	c->next = kdp.names;
	kdp.names = c;
	return c;
}

/*
 * The next name for pattern: a counter per pattern, so we never depend on
 * the kernel's own "%d" (limited to 32k names and unaware of names we are
 * about to use).  The first try takes the counter's name unchecked: the
 * create fails with EEXIST if it is taken, and only then (probe) are names
 * in use skipped with a lookup each - a lookup per session would be a
 * synchronous round trip per session in a storm.
 */
static int ifname_pick(const char *pattern, bool probe, char *out)
{
	struct name_ctr *c;

	if (strstr(pattern, "%d") == NULL) {
		if (ifname_expand(pattern, 0, out, IFNAMSIZ) < 0)
			return -ENAMETOOLONG;
		return link_index(out) ? -EEXIST : 0;
	}
	c = name_counter(pattern);
	if (c == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < IFNAME_NUMBERS; i++) {
		int rc = ifname_expand(pattern, c->n, out, IFNAMSIZ);

		c->n = (c->n + 1) % IFNAME_NUMBERS;
		if (rc == 0 && (!probe || link_index(out) == 0))
			return 0;
	}
	return -ENOSPC;
}

/* The route's MTU towards the peer: our socket is connected, the kernel knows. */
static unsigned path_mtu(const struct tunnel *t)
{
	int mtu = 0;
	socklen_t len = sizeof(mtu);
	int rc = t->remote.sa.sa_family == AF_INET6 ?
		 getsockopt(t->fd, IPPROTO_IPV6, IPV6_MTU, &mtu, &len) :
		 getsockopt(t->fd, IPPROTO_IP, IP_MTU, &mtu, &len);

	return rc == 0 && mtu > 0 ? (unsigned)mtu : 1500;
}

/*
 * What one frame costs on the path: IP header, UDP header and the 4-byte
 * L2TPv3-over-UDP header (RFC 3931 4.1.2.1) when UDP, session ID, the
 * cookie we send, the sublayer we send, and the inner Ethernet header.
 */
static unsigned encap_overhead(const struct session *s)
{
	const struct tunnel *t = s->tunnel;
	unsigned o = t->remote.sa.sa_family == AF_INET6 ? 40 : 20;
	uint8_t clen = 0;

	if (t->encap == L2TP_ENCAP_UDP)
		o += 8 + 4;
	o += 4;
	l2tp_sess_peer_cookie(s->sess, &clen);
	o += clen;
	if (l2tp_sess_peer_l2ss(s->sess))
		o += 4;
	return o + ETH_OVERHEAD;
}

/* MTU of the kernel's l2tpeth interface (a VLAN on it gets 4 less). */
static unsigned session_mtu(const struct session *s)
{
	unsigned path = path_mtu(s->tunnel), o = encap_overhead(s);

	if (s->prof->mtu)
		return s->prof->mtu + (l2tp_sess_pw_type(s->sess) == L2TP_PW_ETH_VLAN ? VLAN_OVERHEAD : 0);
	return path > o + 68 ? path - o : 68;
}

/* ---- sessions: kernel objects ------------------------------------------------- */

void ks_put(struct ksession *ks)
{
	if (--ks->refs == 0) {
		usl_timer_cancel(&ks->cookie_timer);
		links_del(ks);
		free(ks);
	}
}

/* Lets go of ks (its kernel objects are deleted, or were never made). */
static void session_detach(struct session *s, struct ksession *ks)
{
	s->dp_priv = NULL;
	ks->s = NULL;
	ks_put(ks);
}

static void session_fail(struct session *s, struct ksession *ks, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Reports a failed create: the engine sends the CDN, the CLI gets s->dp_error. */
static void session_fail(struct session *s, struct ksession *ks, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	text_vset(&s->dp_error, fmt, ap);
	va_end(ap);
	log_warnx("session %u: %s", s->id, name_str(s->dp_error));
	session_detach(s, ks);
	session_dp_done(s, err);
}

static void session_delete_done(struct kreq *r, int err, const char *ext)
{
	struct ksession *ks = r->obj;

	if (err != 0 && !gone(err))	/* its tunnel went first */
		log_kernel_error("session", ks->sid, "SESSION_DELETE", err, ext);
	ks_put(ks);
}

static struct kreq *session_send_delete(struct ksession *ks)
{
	struct nlmsghdr *nlh = l2tp_msg(L2TP_CMD_SESSION_DELETE, NLM_F_ACK);
	struct kreq *r;

	mnl_attr_put_u32(nlh, L2TP_ATTR_CONN_ID, ks->tid);
	mnl_attr_put_u32(nlh, L2TP_ATTR_SESSION_ID, ks->sid);
	ks->state = K_DELETING;
	r = kreq_submit(nlh, ks, session_delete_done, NULL);
	if (r != NULL)
		ks->refs++;
	else	/* the tunnel's delete takes it anyway */
		log_warnx("session %u: kernel session delete: out of memory", ks->sid);
	return r;
}

static void cookie_attr(struct nlmsghdr *nlh, uint16_t type, const uint8_t *c, uint8_t len)
{
	if (len > 0)
		mnl_attr_put(nlh, type, len, c);
}

/*
 * L2SPEC_TYPE: the kernel has one per session, used both to add the
 * sublayer on transmit and to skip it on receive.  We program what the
 * peer asked to receive (its L2-Specific Sublayer AVP, RFC 3931 5.4.4), so
 * what we send is what it parses; when it differs from what we asked for,
 * the mismatch is logged (receive will then misparse).
 */
void session_prog(const struct session *s, struct kprog *p)
{
	const uint8_t *c;

	memset(p, 0, sizeof(*p));
	p->peer_sid = l2tp_sess_remote_sid(s->sess);
	p->l2spec = l2tp_sess_peer_l2ss(s->sess) ? L2TP_L2SPECTYPE_DEFAULT : L2TP_L2SPECTYPE_NONE;
	/* Data Sequencing AVP: the sender requires sequencing on what it receives */
	p->recv_seq = l2tp_sess_data_seq(s->sess) != 0;
	p->send_seq = l2tp_sess_peer_data_seq(s->sess) != 0;
	c = l2tp_sess_cookie(s->sess, &p->cookie_len);
	memcpy(p->cookie, c, p->cookie_len <= 8 ? p->cookie_len : 8);
	c = l2tp_sess_peer_cookie(s->sess, &p->peer_cookie_len);
	memcpy(p->peer_cookie, c, p->peer_cookie_len <= 8 ? p->peer_cookie_len : 8);
}

/* What only a new SESSION_CREATE can change (MODIFY takes sequencing, not these). */
bool prog_identity_differs(const struct kprog *a, const struct kprog *b)
{
	return a->peer_sid != b->peer_sid || a->l2spec != b->l2spec ||
	       a->cookie_len != b->cookie_len || a->peer_cookie_len != b->peer_cookie_len ||
	       memcmp(a->cookie, b->cookie, a->cookie_len) != 0 ||
	       memcmp(a->peer_cookie, b->peer_cookie, a->peer_cookie_len) != 0;
}

static struct nlmsghdr *session_create_msg(const struct ksession *ks)
{
	struct nlmsghdr *nlh = l2tp_msg(L2TP_CMD_SESSION_CREATE, NLM_F_ACK);
	const struct kprog *p = &ks->prog;

	mnl_attr_put_u32(nlh, L2TP_ATTR_CONN_ID, ks->tid);
	mnl_attr_put_u32(nlh, L2TP_ATTR_SESSION_ID, ks->sid);
	mnl_attr_put_u32(nlh, L2TP_ATTR_PEER_SESSION_ID, p->peer_sid);
	mnl_attr_put_u16(nlh, L2TP_ATTR_PW_TYPE,
			 ks->pw == L2TP_PW_PPP ? L2TP_PWTYPE_PPP : L2TP_PWTYPE_ETH);
	mnl_attr_put_u8(nlh, L2TP_ATTR_L2SPEC_TYPE, p->l2spec);
	/*
	 * The kernel puts COOKIE on what it sends and expects PEER_COOKIE on
	 * what it receives (l2tp_build_l2tpv3_header / l2tp_recv_common; the
	 * iproute2 man page says the same).  In RFC 3931 terms that is the
	 * reverse of the AVPs' owners: the peer's Assigned Cookie is what we
	 * send, ours is what we expect.
	 */
	cookie_attr(nlh, L2TP_ATTR_COOKIE, p->peer_cookie, p->peer_cookie_len);
	cookie_attr(nlh, L2TP_ATTR_PEER_COOKIE, p->cookie, p->cookie_len);
	mnl_attr_put_u8(nlh, L2TP_ATTR_RECV_SEQ, p->recv_seq);
	mnl_attr_put_u8(nlh, L2TP_ATTR_SEND_SEQ, p->send_seq);
	if (ks->pw != L2TP_PW_PPP)
		mnl_attr_put_strz(nlh, L2TP_ATTR_IFNAME, ks->kname);
	return nlh;
}

static void session_create_done(struct kreq *r, int err, const char *ext);

static int session_submit_create(struct session *s, struct ksession *ks)
{
	session_prog(s, &ks->prog);
	ks->req = kreq_submit(session_create_msg(ks), ks, session_create_done, NULL);
	if (ks->req == NULL)
		return -ENOMEM;
	ks->refs++;
	return 0;
}

/* Interface names for s: the kernel's (kname) and the operator's (ifname). */
static int session_names(struct session *s, struct ksession *ks, bool probe)
{
	int rc = ifname_pick(ks->pattern, probe, ks->kname);

	if (rc != 0)
		return rc;
	if (sess_pw(s) == L2TP_PW_ETH_VLAN) {
		if (snprintf(ks->ifname, sizeof(ks->ifname), "%s.%u", ks->kname,
			     s->prof->vlan_id) >= (int)sizeof(ks->ifname))
			return -ENAMETOOLONG;
	} else {
		snprintf(ks->ifname, sizeof(ks->ifname), "%s", ks->kname);
	}
	return 0;
}

/* The profile's pattern; the built-in default names Ethernet devices, so PPP gets its own. */
static void session_pattern(const struct session *s, struct ksession *ks)
{
	const char *p = s->prof->ifname[0] ? s->prof->ifname : "l2tpeth%d";

	if (ks->pw == L2TP_PW_PPP && strcmp(p, "l2tpeth%d") == 0)
		p = "l2tpppp%d";
	snprintf(ks->pattern, sizeof(ks->pattern), "%s", p);
}

static int session_check(const struct session *s, char *err, size_t errlen)
{
	const struct ktunnel *kt = s->tunnel->dp_priv;

	if (kt == NULL || kt->state != K_UP) {
		snprintf(err, errlen, "tunnel %u has no kernel tunnel", s->tunnel->id);
		return -ENOTCONN;
	}
	switch (sess_pw(s)) {
	case L2TP_PW_ETH:
		return 0;
	case L2TP_PW_ETH_VLAN:
		if (s->prof->vlan_id != 0)
			return 0;
		snprintf(err, errlen, "eth_vlan pseudowire but session profile '%s' has no vlan_id",
			 s->prof->name);
		return -EINVAL;
	case L2TP_PW_PPP:
		if (access(pppd_path(), X_OK) == 0)
			return 0;
		snprintf(err, errlen, "PPP pseudowires need pppd: %s: %s (install the ppp package)",
			 pppd_path(), strerror(errno));
		return -ENOENT;
	default:
		snprintf(err, errlen, "pseudowire type %u has no Linux kernel support", sess_pw(s));
		return -EPROTONOSUPPORT;
	}
}

/* A new ksession for s, its SESSION_CREATE queued; 0 or a negative errno (nothing made). */
static int session_start(struct session *s, bool early)
{
	struct ksession *ks = calloc(1, sizeof(*ks));
	int rc;

	if (ks == NULL)
		return -ENOMEM;
	ks->s = s;
	ks->refs = 1;
	ks->tid = s->tunnel->id;
	ks->sid = s->id;
	ks->pw = sess_pw(s);
	ks->state = K_CREATING;
	ks->early = early;
	usl_timer_init(&ks->cookie_timer, on_cookie_timer);
	session_pattern(s, ks);
	rc = session_names(s, ks, false);
	if (rc == 0)
		rc = session_submit_create(s, ks);
	if (rc != 0) {
		text_set(&s->dp_error, "interface name from '%s': %s", ks->pattern, strerror(-rc));
		free(ks);
		return rc;
	}
	s->dp_priv = ks;
	return 0;
}

static int session_activate(struct session *s, struct ksession *ks);

static int kernel_session_create(struct session *s)
{
	char err[256];
	int rc;

	if (s->dp_priv != NULL)		/* prepared: bring it up */
		return session_activate(s, s->dp_priv);
	rc = session_check(s, err, sizeof(err));
	if (rc != 0) {
		text_set(&s->dp_error, "%s", err);
		log_warnx("session %u: %s", s->id, err);
		return rc;
	}
	if (l2tp_sess_l2ss(s->sess) != l2tp_sess_peer_l2ss(s->sess))
		log_warnx("session %u: we require L2-Specific Sublayer %u, the peer %u; the kernel "
			  "has one setting: sending the peer's, receiving will misparse", s->id,
			  l2tp_sess_l2ss(s->sess), l2tp_sess_peer_l2ss(s->sess));
	rc = session_start(s, false);
	if (rc != 0)
		log_warnx("session %u: %s", s->id, name_str(s->dp_error));
	return rc;
}

/*
 * The call is answered, its ICCN (OCCN) not yet in: make the kernel session
 * and its interface now, down, so that our register_netdevice runs while
 * the peer does its own, not after (doc/kernel-dataplane.md).  PPP waits
 * for the call (its pppd is the session's user); anything the create would
 * refuse is left to it, which reports it.
 */
static int kernel_session_prepare(struct session *s)
{
	char err[256];

	if (sess_pw(s) == L2TP_PW_PPP || session_check(s, err, sizeof(err)) != 0)
		return -EOPNOTSUPP;
	return session_start(s, true);
}

/* ---- sessions: the interface once the kernel has it ---------------------------- */

static void pppd_exited(pid_t pid, int status, void *arg)
{
	struct ksession *ks = arg;

	ks->pppd = 0;
	if (ks->s == NULL)
		return;
	log_info("session %u: pppd %d exited (%s %d)", ks->sid, (int)pid,
		 WIFEXITED(status) ? "status" : "signal",
		 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	session_delete(ks->s, L2TP_CDN_CARRIER_LOST, "pppd exited");
}

static int link_up_ppp(struct session *s, struct ksession *ks, char *err, size_t errlen)
{
	pid_t pid = pppd_start(s, ks->ifname, pppd_exited, ks, err, errlen);

	if (pid < 0)
		return errno ? -errno : -EIO;
	ks->pppd = pid;
	return 0;
}

/*
 * An Ethernet session's interface is set up through rtnetlink in the same
 * batches as the l2tp requests: RTM_NEWLINKs by name (MTU, master, address
 * generation, IFF_UP), so a storm of sessions costs no synchronous round
 * trip per session.  What the rarer profiles add on top (a VLAN, an
 * address) is done synchronously (link.c) once they are answered.
 */
static struct nlmsghdr *rt_link_msg(uint16_t type, const char *name)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(scratch);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	return nlh;
}

static void session_linked(struct ksession *ks);

static void link_step(struct ksession *ks, int err, const char *ext, const char *what)
{
	if (err != 0 && ks->link_err == 0) {
		ks->link_err = err;
		ks->link_what = what;
		if (ks->s != NULL)
			log_kernel_error("session", ks->sid, what, err, ext);
	}
	if (--ks->links_pending == 0)
		session_linked(ks);
	ks_put(ks);	/* the request's reference */
}

static void link_set_done(struct kreq *r, int err, const char *ext)
{
	link_step(r->obj, err, ext, "RTM_NEWLINK (mtu, up)");
}

/*
 * The index of an interface we just made (its RTM_NEWLINKs answered):
 * SIOCGIFINDEX on a socket we hold.  Not an RTM_GETLINK, which takes the
 * RTNL lock and formats the whole link for one number; not
 * if_nametoindex(), a socket per call.  (On a name that does not exist the
 * ioctl makes the kernel try a module load: link.c's link_index() is the
 * one for names that may be free.)  0 when it is gone.
 */
static unsigned made_link_index(const char *name)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(kdp.rtnl.fd, SIOCGIFINDEX, &ifr) < 0)
		return 0;
	return (unsigned)ifr.ifr_ifindex;
}

/* One request of the interface's set-up: session_linked() runs when all are answered. */
static bool link_submit_on(struct nlchan *ch, struct ksession *ks, const struct nlmsghdr *nlh,
			   kreq_done_fn done, kreq_data_fn data)
{
	if (kreq_submit_on(ch, nlh, ks, done, data) == NULL)
		return false;
	ks->refs++;
	ks->links_pending++;
	return true;
}

static bool link_submit(struct ksession *ks, const struct nlmsghdr *nlh, kreq_done_fn done,
			kreq_data_fn data)
{
	return link_submit_on(&kdp.rtnl, ks, nlh, done, data);
}

static bool link_submit_up(struct ksession *ks)
{
	struct nlmsghdr *nlh = rt_link_msg(RTM_NEWLINK, ks->kname);
	struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);

	ifi->ifi_flags = ifi->ifi_change = IFF_UP;
	return link_submit(ks, nlh, link_set_done, NULL);
}

/*
 * An IPv6 link-local address on the interface the operator uses: with an
 * address configured (a routed pseudowire) unless told otherwise, never on
 * a plain wire.  A link-local address sends DAD, router solicitations and
 * MLD reports into the customer's layer 2 and answers theirs; at a storm of
 * pseudowires that traffic, and the kernel's per-interface IPv6 routes,
 * cost more than all the rest of the set-up (doc/kernel-dataplane.md).
 */
static bool want_ipv6_ll(const struct session *s)
{
	return s->prof->ipv6_link_local == CFG_LL6_ON ||
	       (s->prof->ipv6_link_local == CFG_LL6_AUTO && s->prof->address[0] != '\0');
}

/* IFLA_AF_SPEC { AF_INET6 { IFLA_INET6_ADDR_GEN_MODE: none } } */
static void put_no_ipv6_ll(struct nlmsghdr *nlh)
{
	struct nlattr *spec = mnl_attr_nest_start(nlh, IFLA_AF_SPEC);
	struct nlattr *in6 = mnl_attr_nest_start(nlh, AF_INET6);

	mnl_attr_put_u8(nlh, IFLA_INET6_ADDR_GEN_MODE, IN6_ADDR_GEN_MODE_NONE);
	mnl_attr_nest_end(nlh, in6);
	mnl_attr_nest_end(nlh, spec);
}

/*
 * The kernel made the session and its l2tpeth device: MTU, master and up
 * (its index is read once these are answered: made_link_index()).
 * Without a link-local address the mode is set in a first
 * request and IFF_UP in a second (the kernel makes the address on up).  A
 * session made early stays down: session_activate() sends the IFF_UP.
 */
static int session_link_submit(struct session *s, struct ksession *ks, char *err, size_t errlen)
{
	bool up = !ks->early;
	const char *bridge = ks->pw == L2TP_PW_ETH ? s->prof->bridge : NULL;
	/* under a VLAN (eth_vlan) the l2tpeth is a trunk: the VLAN gets the policy */
	bool ll6 = ks->pw == L2TP_PW_ETH && want_ipv6_ll(s);
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	unsigned master = 0;

	if (bridge != NULL && bridge[0]) {
		master = link_index(bridge);
		if (master == 0) {
			snprintf(err, errlen, "bridge %s: no such interface", bridge);
			return -ENODEV;
		}
	}
	ks->mtu = session_mtu(s);
	nlh = rt_link_msg(RTM_NEWLINK, ks->kname);
	mnl_attr_put_u32(nlh, IFLA_MTU, ks->mtu);
	if (master != 0)
		mnl_attr_put_u32(nlh, IFLA_MASTER, master);
	ifi = mnl_nlmsg_get_payload(nlh);
	if (!ll6)
		put_no_ipv6_ll(nlh);
	else if (up)
		ifi->ifi_flags = ifi->ifi_change = IFF_UP;	/* all in one request */
	ks->state = K_LINKING;
	if (!link_submit(ks, nlh, link_set_done, NULL)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (!ll6 && up && !link_submit_up(ks))
		goto nomem;
	return 0;
nomem:	/* reported when those sent are answered */
	ks->link_err = -ENOMEM;
	ks->link_what = "out of memory";
	return 0;
}

/* What a profile adds once the l2tpeth device is up: a VLAN on it (the operator's), an address. */
static int session_link_extras(struct session *s, struct ksession *ks, char *err, size_t errlen)
{
	struct link_params p = { .address = s->prof->address };
	int rc;

	ks->ifindex = ks->kindex;
	if (ks->pw == L2TP_PW_ETH_VLAN) {
		rc = link_vlan_add(ks->kindex, ks->ifname, s->prof->vlan_id, &ks->ifindex,
				   err, errlen);
		if (rc != 0)
			return rc;
		ks->mtu -= VLAN_OVERHEAD;
		p.mtu = ks->mtu;
		p.up = true;
		p.bridge = s->prof->bridge;
		p.no_ipv6_ll = !want_ipv6_ll(s);
	}
	return link_configure(ks->ifindex, &p, err, errlen);
}

static void session_ready(struct session *s, struct ksession *ks)
{
	ks->state = K_UP;
	links_add(ks);
	cookie_watch(ks);
	snprintf(s->ifname, sizeof(s->ifname), "%s", ks->ifname);
	s->dp_handle = ks->ifindex;
	session_dp_done(s, 0);
}

/*
 * A preparation failed before the call connected: nothing to report yet;
 * the create at the connected message starts afresh and reports.
 */
static void session_unprepare(struct session *s, struct ksession *ks, const char *why)
{
	log_info("session %u: made ahead of its call: %s (made again when it connects)",
		 s->id, why);
	session_detach(s, ks);
}

/* Made early and linked: wait for the call, or go on if it connected meanwhile. */
static void session_prepared(struct session *s, struct ksession *ks)
{
	int rc;

	ks->state = K_READY;
	if (!ks->activate)
		return;
	rc = session_activate(s, ks);
	if (rc != 0)
		session_dp_done(s, rc);
}

static void session_linked(struct ksession *ks)
{
	struct session *s = ks->s;
	char err[256] = "";
	int rc = ks->link_err;

	if (s == NULL)		/* deleted meanwhile: its SESSION_DELETE is sent */
		return;
	if (rc != 0) {
		snprintf(err, sizeof(err), "%s: %s", ks->link_what, strerror(-rc));
	} else if (ks->kindex == 0 && (ks->kindex = made_link_index(ks->kname)) == 0) {
		rc = -ENODEV;
		snprintf(err, sizeof(err), "its index: %s", strerror(errno));
	} else if (!ks->early) {
		rc = session_link_extras(s, ks, err, sizeof(err));
	}
	if (rc != 0) {
		session_send_delete(ks);	/* no kernel object may stay behind */
		if (ks->early && !ks->activate)
			session_unprepare(s, ks, err);
		else
			session_fail(s, ks, rc, "%s: %s", ks->ifname, err);
		return;
	}
	if (ks->early)
		session_prepared(s, ks);
	else
		session_ready(s, ks);
}

static void seq_modify_done(struct kreq *r, int err, const char *ext)
{
	link_step(r->obj, err, ext, "SESSION_MODIFY (sequencing)");
}

struct nlmsghdr *session_seq_msg(const struct ksession *ks)
{
	struct nlmsghdr *nlh = l2tp_msg(L2TP_CMD_SESSION_MODIFY, NLM_F_ACK);

	mnl_attr_put_u32(nlh, L2TP_ATTR_CONN_ID, ks->tid);
	mnl_attr_put_u32(nlh, L2TP_ATTR_SESSION_ID, ks->sid);
	mnl_attr_put_u8(nlh, L2TP_ATTR_RECV_SEQ, ks->prog.recv_seq);
	mnl_attr_put_u8(nlh, L2TP_ATTR_SEND_SEQ, ks->prog.send_seq);
	return nlh;
}

/*
 * The call connected (the engine's create): a session made early is
 * brought up, once made.  The connected message may have changed the
 * call: sequencing is modified in place; the sublayer or a cookie (which
 * the kernel cannot modify) means a new kernel session.
 */
static int session_activate(struct session *s, struct ksession *ks)
{
	struct kprog now;

	ks->activate = true;
	if (ks->state != K_READY)
		return 0;	/* still being made: session_prepared() comes back */
	session_prog(s, &now);
	if (prog_identity_differs(&ks->prog, &now)) {
		log_info("session %u: the connected call differs from what its kernel session "
			 "was made with: making it again", s->id);
		session_send_delete(ks);
		session_detach(s, ks);
		return kernel_session_create(s);
	}
	ks->early = false;
	ks->state = K_LINKING;
	if (now.recv_seq != ks->prog.recv_seq || now.send_seq != ks->prog.send_seq) {
		ks->prog = now;
		if (!link_submit_on(&kdp.gnl, ks, session_seq_msg(ks), seq_modify_done, NULL))
			goto nomem;
	}
	if (!link_submit_up(ks))
		goto nomem;
	return 0;
nomem:
	if (ks->links_pending > 0) {	/* reported when those sent are answered */
		ks->link_err = -ENOMEM;
		ks->link_what = "out of memory";
		return 0;
	}
	text_set(&s->dp_error, "out of memory");
	session_send_delete(ks);
	session_detach(s, ks);
	return -ENOMEM;
}

/* The kernel has the session: pppd for PPP, the interface's set-up for Ethernet. */
static void session_up(struct session *s, struct ksession *ks)
{
	char err[256] = "";
	int rc;

	if (ks->pw == L2TP_PW_PPP) {
		rc = link_up_ppp(s, ks, err, sizeof(err));
		if (rc == 0) {
			session_ready(s, ks);
			return;
		}
	} else {
		rc = session_link_submit(s, ks, err, sizeof(err));
		if (rc == 0)
			return;
	}
	session_send_delete(ks);	/* no kernel object may stay behind */
	session_fail(s, ks, rc, "%s: %s", ks->ifname, err);
}

/* The name was taken between our check and the kernel's: take the next one. */
static bool session_retry_name(struct session *s, struct ksession *ks, int err)
{
	if (err != -EEXIST || ks->pw == L2TP_PW_PPP || strstr(ks->pattern, "%d") == NULL ||
	    ks->name_tries++ >= NAME_RETRIES || link_index(ks->kname) == 0)
		return false;
	return session_names(s, ks, true) == 0 && session_submit_create(s, ks) == 0;
}

static void session_create_done(struct kreq *r, int err, const char *ext)
{
	struct ksession *ks = r->obj;
	struct session *s = ks->s;

	ks->req = NULL;
	if (s == NULL) {			/* cancelled while the kernel worked */
		if (err == 0)
			session_send_delete(ks);
	} else if (err != 0 && !session_retry_name(s, ks, err)) {
		log_kernel_error("session", ks->sid, "SESSION_CREATE", err, ext);
		if (ks->early && !ks->activate)
			session_unprepare(s, ks, "kernel refused the session");
		else
			session_fail(s, ks, err, "kernel refused the session: %s%s%s",
				     strerror(-err), ext ? ": " : "", ext ? ext : "");
	} else if (err == 0) {
		session_up(s, ks);
	}
	ks_put(ks);	/* the request's reference */
}

static void kernel_session_delete(struct session *s)
{
	struct ksession *ks = s->dp_priv;

	s->dp_priv = NULL;
	if (ks == NULL)
		return;
	ks->s = NULL;
	links_del(ks);	/* its interfaces' deletion is ours, not news */
	if (ks->pppd > 0)
		pppd_stop(ks->pppd);
	ks->pppd = 0;
	if (ks->state != K_CREATING) {
		struct kreq *r = session_send_delete(ks);
		struct ktunnel *kt = s->tunnel->dp_priv;

		/* a tunnel delete in this turn makes it redundant: see kernel_tunnel_delete */
		if (r != NULL && kt != NULL && kt->state == K_UP)
			usl_list_add_tail(&kt->sess_dels, &r->tlink);
	} else if (ks->req != NULL && ks->req->queued) {
		kreq_unqueue(ks->req);	/* never sent: nothing in the kernel */
		ks->req = NULL;
		ks->refs--;
	}
	ks_put(ks);	/* the session's reference */
}

/* ---- sessions: their interfaces by index (link notices) --------------------------- */

static bool klink_eq(const struct usl_hnode *n, const void *key)
{
	return usl_hash_entry(n, struct klink, node)->ifindex == *(const unsigned *)key;
}

/* Indexes the session's interfaces: the l2tpeth device and its VLAN, if any. */
void links_add(struct ksession *ks)
{
	unsigned idx[2] = { ks->kindex, ks->ifindex != ks->kindex ? ks->ifindex : 0 };

	for (int i = 0; i < 2; i++) {
		if (idx[i] == 0 || ks->links[i].ifindex != 0)
			continue;
		ks->links[i].ifindex = idx[i];
		ks->links[i].ks = ks;
		usl_hash_insert(&kdp.links, &ks->links[i].node, usl_hash_u32(idx[i]));
	}
}

void links_del(struct ksession *ks)
{
	for (int i = 0; i < 2; i++) {
		if (ks->links[i].ifindex == 0)
			continue;
		usl_hash_remove(&kdp.links, &ks->links[i].node);
		ks->links[i].ifindex = 0;
	}
}

struct ksession *links_find(unsigned ifindex)
{
	struct usl_hnode *n = usl_hash_lookup(&kdp.links, &ifindex, usl_hash_u32(ifindex));

	return n ? usl_hash_entry(n, struct klink, node)->ks : NULL;
}

/* ---- init and shutdown ------------------------------------------------------------ */

static void kernel_free_all(void)
{
	struct usl_hnode *n;
	struct name_ctr *c;

	chan_drop_queue(&kdp.gnl);
	chan_drop_queue(&kdp.rtnl);
	chan_drop_queue(&kdp.dump);
	while ((n = usl_hash_first(&kdp.inflight)) != NULL) {
		usl_hash_remove(&kdp.inflight, n);
		free(usl_hash_entry(n, struct kreq, by_seq));
	}
	usl_list_init(&kdp.confirm_q);
	while ((n = usl_hash_first(&kdp.tunnels)) != NULL) {
		usl_hash_remove(&kdp.tunnels, n);
		free(usl_hash_entry(n, struct ktunnel, by_id));
	}
	while ((c = kdp.names) != NULL) {
		kdp.names = c->next;
		free(c);
	}
	usl_hash_destroy(&kdp.inflight);
	usl_hash_destroy(&kdp.tunnels);
	usl_hash_destroy(&kdp.links);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void kernel_close(void)
{
	dpw_close();
	usl_timer_cancel(&kdp.verify_timer);
	usl_timer_cancel(&kdp.confirm_timer);
	usl_timer_cancel(&kdp.retry_timer);
	usl_timer_cancel(&kdp.adopt_timer);
	usl_timer_cancel(&kdp.stats_timer);
	if (kdp.flush_ev != NULL)
		event_free(kdp.flush_ev);
	kdp.flush_ev = NULL;
	usl_fd_close(&kdp.gnl.ev, &kdp.gnl.fd);
	usl_fd_close(&kdp.rtnl.ev, &kdp.rtnl.fd);
	usl_fd_close(&kdp.dump.ev, &kdp.dump.fd);
	kernel_free_all();
	if (kdp.children)
		child_shutdown();
	kdp.children = false;
	link_shutdown();
	usl_timer_cancel(&kdp.rec_timer);
	dps_close(&kdp.rec);
	close_fd(&kdp.lock_fd);	/* releases the lock */
}

static int kernel_setup(char *err, size_t errlen)
{
	int rc;

	if (usl_hash_init(&kdp.inflight, 1024, kreq_seq_eq) < 0 ||
	    usl_hash_init(&kdp.tunnels, 1024, ktunnel_id_eq) < 0 ||
	    usl_hash_init(&kdp.links, 1024, klink_eq) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	usl_timer_init(&kdp.retry_timer, on_retry_timer);
	usl_timer_init(&kdp.rec_timer, on_rec_timer);
	usl_timer_init(&kdp.verify_timer, on_verify_timer);
	usl_timer_init(&kdp.confirm_timer, on_confirm_timer);
	usl_timer_init(&kdp.adopt_timer, on_adopt_timer);
	usl_timer_init(&kdp.stats_timer, on_stats_timer);
	usl_list_init(&kdp.confirm_q);
	kdp.flush_ev = event_new(usl_loop_base(l2tpd.loop), -1, 0, on_flush_event, NULL);
	if (kdp.flush_ev == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (nl_open(&kdp.gnl, NETLINK_GENERIC, "generic netlink", NL_ACK_COST, err, errlen) < 0 ||
	    nl_open(&kdp.rtnl, NETLINK_ROUTE, "rtnetlink", RT_ANSWER_COST, err, errlen) < 0 ||
	    nl_open(&kdp.dump, NETLINK_GENERIC, "generic netlink (counters)", NL_ACK_COST, err,
		    errlen) < 0 ||
	    family_resolve(err, errlen) < 0)
		return -1;
	kdp.dump.rx_max = STATS_RX_PARTS;
	if (rec_open(err, errlen) < 0)
		return DP_ERR_STATE;
	rc = stale_cleanup(err, errlen);
	if (rc < 0)
		return rc;
	if (link_init(err, errlen) < 0)
		return -1;
	if (child_init(l2tpd.loop) < 0) {
		snprintf(err, errlen, "child registry: %s", strerror(errno));
		return -1;
	}
	kdp.children = true;
	if (dpw_open(kdp.family, kdp.mcgrp, &watch_ops, err, errlen) < 0)
		return -1;
	return kept_scan(err, errlen);
}

static int kernel_init(char *err, size_t errlen)
{
	int rc;

	memset(&kdp, 0, sizeof(kdp));
	kdp.gnl.fd = kdp.rtnl.fd = kdp.dump.fd = kdp.rec.fd = kdp.lock_fd = -1;
	rc = kernel_setup(err, errlen);
	if (rc < 0) {
		kernel_close();
		return rc;
	}
	log_info("kernel data plane: l2tp family %u, window %u requests, state file %s",
		 kdp.family, kdp.gnl.window, kdp.rec.path);
	return 0;
}

/*
 * After the loop: every tunnel has been let go (deletes queued).  Send them,
 * delete whatever recorded tunnel is still up, and wait for the answers; a
 * tunnel not confirmed gone stays in the file for the next start.
 */
static void kernel_shutdown(void)
{
	struct usl_list walk;
	struct usl_hnode *n;
	unsigned left;

	if (kdp.gnl.fd < 0)
		return;
	nl_sync(SYNC_MS);
	usl_list_init(&walk);
	for (n = usl_hash_first(&kdp.tunnels); n != NULL; n = usl_hash_next(&kdp.tunnels, n)) {
		struct ktunnel *kt = usl_hash_entry(n, struct ktunnel, by_id);

		/* K_KEPT: a stop before the adoption ended */
		if ((kt->state == K_UP || kt->state == K_KEPT) && kt->req == NULL)
			usl_list_add_tail(&walk, &kt->link);
	}
	while (!usl_list_empty(&walk)) {
		struct ktunnel *kt = usl_list_first_entry(&walk, struct ktunnel, link);

		usl_list_del(&kt->link);
		kt->t = NULL;
		tunnel_send_delete(kt);
	}
	nl_sync(SYNC_MS);
	usl_timer_cancel(&kdp.rec_timer);	/* a last repair attempt, now */
	rec_flush();
	left = (unsigned)usl_hash_count(&kdp.tunnels);
	if (left == 0)
		unlink(kdp.rec.path);
	else
		log_warnx("kernel: %u tunnels not confirmed deleted; %s keeps them for the next start",
			  left, kdp.rec.path);
	kernel_close();
}

const struct dp_ops dp_kernel_ops = {
	.name = "kernel",
	.init = kernel_init,
	.shutdown = kernel_shutdown,
	.tunnel_create = kernel_tunnel_create,
	.tunnel_delete = kernel_tunnel_delete,
	.session_create = kernel_session_create,
	.session_prepare = kernel_session_prepare,
	.session_delete = kernel_session_delete,
	.session_stats = kernel_session_stats,
	.stats_refresh_all = kernel_stats_refresh_all,
	.session_stats_cached = kernel_session_stats_cached,
	.describe = kernel_describe,
	.session_modify = kernel_session_modify,
	.pw_types = kernel_pw_types,
	.tunnel_save = kernel_tunnel_save,
	.tunnel_adopt = kernel_tunnel_adopt,
	.session_save = kernel_session_save,
	.session_adopt = kernel_session_adopt,
	.idle = kernel_idle,
};
