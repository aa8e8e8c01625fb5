/*
 * src/dp_kernel_nl.c - the kernel data plane's request machine: netlink
 * requests in batches, their answers, the resync after lost answers, the
 * "l2tp" family's id and the sockets (an overview: dp_kernel.c).
 *
 * Requests.  One non-blocking netlink socket on the daemon's loop.  Every
 * request is a struct kreq holding its encoded message; it is queued, and
 * the queue goes out as a batch (many messages, one sendmsg) at the next
 * loop turn, so the 1,000 creates one turn of the protocol produces cost
 * a handful of system calls.  Each request carries its own sequence number
 * and waits in a hash keyed by it; the kernel's answer (NLMSG_ERROR ack,
 * GET reply, NLMSG_DONE) is routed to its request whatever the order, and
 * one request's error never touches another's (each message of a received
 * datagram is dispatched on its own, as mnl_cb_run2 does, but an error or a
 * NLM_F_DUMP_INTR does not stop the walk).  Many requests are in flight;
 * how many is bounded by a window sized from the receive buffer, so the
 * answers fit in it.  If they do not (ENOBUFS), the window halves and every
 * unanswered request is settled again: GETs, MODIFYs and DELETEs are sent
 * again (a repeated DELETE answers ENODEV, which counts as done); a CREATE
 * is checked with a GET of its object.
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/l2tp.h>

#include "dp_kernel_int.h"

struct log_ratelimit nl_rl = LOG_RATELIMIT_INIT(10, 10);
static uint8_t txbuf[TX_BUFSZ] __attribute__((aligned(4)));
static uint8_t rxbuf[RX_BATCH][RX_BUFSZ] __attribute__((aligned(4)));
uint8_t scratch[1024] __attribute__((aligned(4)));	/* message being built */

/* ---- requests ------------------------------------------------------------ */

static const struct nlmsghdr *kreq_nlh(const struct kreq *r)
{
	return (const struct nlmsghdr *)r->msg;
}

static uint8_t kreq_cmd(const struct kreq *r)
{
	return ((const struct genlmsghdr *)mnl_nlmsg_get_payload(kreq_nlh(r)))->cmd;
}

bool kreq_seq_eq(const struct usl_hnode *n, const void *key)
{
	return usl_hash_entry(n, struct kreq, by_seq)->seq == *(const uint32_t *)key;
}

static struct kreq *kreq_find(uint32_t seq)
{
	struct usl_hnode *n = usl_hash_lookup(&kdp.inflight, &seq, usl_hash_u32(seq));

	return n ? usl_hash_entry(n, struct kreq, by_seq) : NULL;
}

/* A generic netlink l2tp message in the scratch buffer. */
struct nlmsghdr *l2tp_msg(uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(scratch);
	struct genlmsghdr *g;

	nlh->nlmsg_type = kdp.family;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = L2TP_GENL_VERSION;
	return nlh;
}

/*
 * The requests of one loop turn leave together: an activated libevent event
 * runs after the callbacks already due in this turn (a usl timer would wait
 * for the loop's 10 ms timer grid).
 */
void flush_soon(void)
{
	if (kdp.flush_pending || kdp.flush_ev == NULL)
		return;
	kdp.flush_pending = true;
	event_active(kdp.flush_ev, EV_TIMEOUT, 0);
}

/* The rest of a big queue: after the loop has polled the sockets again. */
static void flush_next_turn(void)
{
	static const struct timeval zero = { 0, 0 };

	if (kdp.flush_pending || kdp.flush_ev == NULL)
		return;
	kdp.flush_pending = true;
	event_add(kdp.flush_ev, &zero);
}

static void kreq_queue(struct kreq *r)
{
	if (++kdp.seq == 0)
		kdp.seq = 1;
	r->seq = kdp.seq;
	((struct nlmsghdr *)r->msg)->nlmsg_seq = r->seq;
	usl_list_add_tail(&r->ch->queue, &r->qlink);
	r->queued = true;
	flush_soon();
}

/* Copies nlh into a new request for ch and queues it; NULL when out of memory. */
struct kreq *kreq_submit_on(struct nlchan *ch, const struct nlmsghdr *nlh, void *obj,
			    kreq_done_fn done, kreq_data_fn data)
{
	struct kreq *r = malloc(sizeof(*r) + nlh->nlmsg_len);

	if (r == NULL)
		return NULL;
	memset(r, 0, sizeof(*r));
	usl_list_init(&r->tlink);
	memcpy(r->msg, nlh, nlh->nlmsg_len);
	r->ch = ch;
	r->obj = obj;
	r->done = done;
	r->data = data;
	kreq_queue(r);
	return r;
}

/* An l2tp (generic netlink) request. */
struct kreq *kreq_submit(const struct nlmsghdr *nlh, void *obj, kreq_done_fn done,
			 kreq_data_fn data)
{
	return kreq_submit_on(&kdp.gnl, nlh, obj, done, data);
}

/* Drops a request that never left the queue (a cancelled create). */
void kreq_unqueue(struct kreq *r)
{
	usl_list_del(&r->qlink);
	usl_list_del(&r->tlink);
	free(r);
}

static void kreq_finish(struct kreq *r, int err, const char *ext)
{
	usl_hash_remove(&kdp.inflight, &r->by_seq);
	r->ch->n_inflight--;
	if (err == 0 && r->ch->window < r->ch->window_max)
		r->ch->window++;
	r->done(r, err, ext);
	free(r);
}

/*
 * Sends what the window allows, in one sendmsg of at most TX_BATCH_MSGS:
 * the kernel processes a batch inside the call, so the bound keeps the
 * loop responsive; the rest goes at the next turn.
 */
static void chan_flush(struct nlchan *ch)
{
	struct usl_list *pos;
	size_t off = 0;
	unsigned n = 0;

	usl_list_foreach(pos, &ch->queue) {
		struct kreq *r = usl_list_entry(pos, struct kreq, qlink);
		size_t len = kreq_nlh(r)->nlmsg_len;

		if (ch->n_inflight + n >= ch->window || n >= TX_BATCH_MSGS ||
		    off + len > sizeof(txbuf))
			break;
		memcpy(txbuf + off, r->msg, len);
		off += len;
		n++;
	}
	if (n == 0)
		return;
	if (send(ch->fd, txbuf, off, 0) < 0) {
		log_warnx_rl(&nl_rl, now(), "%s send: %s (retrying)", ch->name, strerror(errno));
		usl_timer_arm(l2tpd.timers, &kdp.retry_timer, usl_time_ms(10));
		return;
	}
	while (n-- > 0) {
		struct kreq *r = usl_list_first_entry(&ch->queue, struct kreq, qlink);

		usl_list_del(&r->qlink);
		usl_list_del(&r->tlink);
		r->queued = false;
		usl_hash_insert(&kdp.inflight, &r->by_seq, usl_hash_u32(r->seq));
		ch->n_inflight++;
	}
	if (!usl_list_empty(&ch->queue) && ch->n_inflight < ch->window)
		flush_next_turn();
}

static void nl_flush(void)
{
	rec_flush();	/* "+id" must be on file before the kernel has the tunnel */
	chan_flush(&kdp.gnl);
	chan_flush(&kdp.rtnl);
	chan_flush(&kdp.dump);
}

void on_flush_event(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	kdp.flush_pending = false;
	nl_flush();
}

void on_retry_timer(struct usl_timer *tm)
{
	(void)tm;
	nl_flush();
}

/* ---- answers ------------------------------------------------------------- */

/* The errno of an NLMSG_ERROR (0 for an ACK) and the kernel's extack text, if any. */
static int nl_error(const struct nlmsghdr *nlh, const char **ext)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	size_t off = sizeof(*e);

	*ext = NULL;
	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
		return -EIO;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return e->error;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(e->msg);
	mnl_attr_for_each(a, nlh, off)
		if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
			*ext = mnl_attr_get_str(a);
	return e->error;
}

static int nl_done_error(const struct nlmsghdr *nlh)
{
	int err = 0;

	if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(err)))
		memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
	return err;
}

/* Every message of a datagram goes to its own request, errors included. */
static void nl_input(const struct nlchan *ch, const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;
	int rem = (int)len;
	const char *ext = NULL;
	struct kreq *r;
	int err;

	for (; mnl_nlmsg_ok(nlh, rem); nlh = mnl_nlmsg_next(nlh, &rem)) {
		r = kreq_find(nlh->nlmsg_seq);
		if (r == NULL || r->ch != ch) {
			log_debug("%s: answer to no request (seq %u type %u)", ch->name,
				  nlh->nlmsg_seq, nlh->nlmsg_type);
			continue;
		}
		switch (nlh->nlmsg_type) {
		case NLMSG_ERROR:
			err = nl_error(nlh, &ext);	/* before ext is read */
			kreq_finish(r, err, ext);
			break;
		case NLMSG_DONE:
			kreq_finish(r, nl_done_error(nlh), NULL);
			break;
		case NLMSG_NOOP:
		case NLMSG_OVERRUN:
			break;
		default:
			r->found = true;
			if (r->data != NULL)
				r->data(r, nlh);
			break;
		}
	}
}

int attr_cb(const struct nlattr *a, void *data)
{
	struct attr_table *t = data;
	unsigned type = mnl_attr_get_type(a);

	if (type <= t->max)
		t->tb[type] = a;
	return MNL_CB_OK;
}

void l2tp_attrs(const struct nlmsghdr *nlh, const struct nlattr **tb)
{
	struct attr_table t = { tb, L2TP_ATTR_MAX };

	memset(tb, 0, sizeof(*tb) * (L2TP_ATTR_MAX + 1));
	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), attr_cb, &t);
}

uint32_t attr_u32(const struct nlattr *a)
{
	return a && mnl_attr_validate(a, MNL_TYPE_U32) == 0 ? mnl_attr_get_u32(a) : 0;
}

/* ---- resync after lost answers -------------------------------------------- */

void probe_data(struct kreq *p, const struct nlmsghdr *nlh)
{
	(void)p;
	(void)nlh;
}

/* The GET settles the create it checked: its object exists, or it failed. */
static void probe_done(struct kreq *p, int err, const char *ext)
{
	struct kreq *orig = p->obj;
	int res = err == 0 && p->found ? 0 : -EIO;

	(void)ext;
	orig->done(orig, res, res ? "netlink answer lost and the object is absent" : NULL);
	free(orig);
}

/* A GET (doit) of the object orig created, to learn whether it did. */
static bool kreq_probe(struct kreq *orig)
{
	const struct nlattr *tb[L2TP_ATTR_MAX + 1];
	bool session = kreq_cmd(orig) == L2TP_CMD_SESSION_CREATE;
	struct nlmsghdr *nlh;

	l2tp_attrs(kreq_nlh(orig), tb);
	nlh = l2tp_msg(session ? L2TP_CMD_SESSION_GET : L2TP_CMD_TUNNEL_GET, NLM_F_ACK);
	mnl_attr_put_u32(nlh, L2TP_ATTR_CONN_ID, attr_u32(tb[L2TP_ATTR_CONN_ID]));
	if (session)
		mnl_attr_put_u32(nlh, L2TP_ATTR_SESSION_ID, attr_u32(tb[L2TP_ATTR_SESSION_ID]));
	return kreq_submit(nlh, orig, probe_done, probe_data) != NULL;
}

static void kreq_recover(struct kreq *r)
{
	uint8_t cmd = kreq_cmd(r);

	if (r->ch == &kdp.gnl && kreq_nlh(r)->nlmsg_type == kdp.family &&
	    (cmd == L2TP_CMD_TUNNEL_CREATE || cmd == L2TP_CMD_SESSION_CREATE)) {
		if (!kreq_probe(r)) {
			r->done(r, -ENOMEM, "netlink answer lost");
			free(r);
		}
		return;
	}
	r->found = false;
	kreq_queue(r);	/* idempotent: GET, dump, MODIFY, DELETE (ENODEV = done), link set */
}

/*
 * The receive buffer overflowed: some answers are gone, and which is not
 * known.  The kernel ran every request we sent before answering, so the
 * objects' state is settled: ask again for all that are unanswered.
 */
static void nl_resync(struct nlchan *ch, const char *why)
{
	struct usl_list lost;
	struct usl_hnode *n;

	kdp.resyncs++;
	log_warnx_rl(&nl_rl, now(), "%s: %s with %u requests unanswered: re-checking them "
		     "(window %u -> %u)", ch->name, why, ch->n_inflight, ch->window,
		     ch->window / 2 > WINDOW_MIN ? ch->window / 2 : WINDOW_MIN);
	ch->window = ch->window / 2 > WINDOW_MIN ? ch->window / 2 : WINDOW_MIN;
	usl_list_init(&lost);
	for (n = usl_hash_first(&kdp.inflight); n != NULL; n = usl_hash_next(&kdp.inflight, n)) {
		struct kreq *r = usl_hash_entry(n, struct kreq, by_seq);

		if (r->ch == ch)
			usl_list_add_tail(&lost, &r->qlink);	/* qlink is free while in flight */
	}
	while (!usl_list_empty(&lost)) {
		struct kreq *r = usl_list_first_entry(&lost, struct kreq, qlink);

		usl_list_del(&r->qlink);
		usl_hash_remove(&kdp.inflight, &r->by_seq);
		ch->n_inflight--;
		kreq_recover(r);
	}
}

static struct mmsghdr rx_msgs[RX_BATCH];
static struct iovec rx_iov[RX_BATCH];

/* What ch has, up to its rx_max datagrams: the loop comes back for the rest. */
static void nl_read(struct nlchan *ch)
{
	unsigned left = ch->rx_max, batch;
	bool lost = false;
	int n;

	while (left > 0) {
		batch = left < RX_BATCH ? left : RX_BATCH;
		for (unsigned i = 0; i < batch; i++) {
			rx_iov[i] = (struct iovec){ rxbuf[i], RX_BUFSZ };
			rx_msgs[i].msg_hdr = (struct msghdr){ .msg_iov = &rx_iov[i], .msg_iovlen = 1 };
		}
		left -= batch;
		n = recvmmsg(ch->fd, rx_msgs, batch, MSG_DONTWAIT, NULL);
		if (n < 0 && errno == ENOBUFS) {
			lost = true;
			continue;
		}
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				log_warnx_rl(&nl_rl, now(), "%s recv: %s", ch->name, strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			if (rx_msgs[i].msg_hdr.msg_flags & MSG_TRUNC)
				lost = true;
			else
				nl_input(ch, rxbuf[i], rx_msgs[i].msg_len);
		}
		if ((unsigned)n < batch)
			break;
	}
	if (lost)
		nl_resync(ch, "receive buffer overrun (ENOBUFS)");
}

static void on_nl_readable(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	nl_read(arg);
	nl_flush();	/* the window opened; completions queued follow-ups */
}

/* Start-up and shut-down only: runs the request machine until it is idle. */
bool chan_busy(const struct nlchan *ch)
{
	return ch->fd >= 0 && (ch->n_inflight > 0 || !usl_list_empty(&ch->queue));
}

static unsigned chan_queued(const struct nlchan *ch)
{
	const struct usl_list *pos;
	unsigned n = 0;

	usl_list_foreach(pos, &ch->queue)
		n++;
	return n;
}

/* What a wait that failed had heard: the caller's error says only "no answer". */
static void sync_timed_out(const struct usl_progress_wait *w, unsigned heard)
{
	usl_time t = usl_clock_now(&usl_clock_monotonic);

	log_warnx("kernel: no answer for %lld ms (%u answers in %lld ms before): %s %u requests "
		  "unanswered, %u unsent; %s %u unanswered, %u unsent",
		  (long long)usl_time_to_ms(usl_time_sub(t, w->heard)), heard,
		  (long long)usl_time_to_ms(usl_time_sub(w->heard, w->started)), kdp.gnl.name,
		  kdp.gnl.n_inflight, chan_queued(&kdp.gnl), kdp.rtnl.name, kdp.rtnl.n_inflight,
		  chan_queued(&kdp.rtnl));
}

/*
 * A start-up listing of 10,000 tunnels took more than 5 s under emulation
 * (Linux 6.1 finds each dumped tunnel by walking the list from its head):
 * the wait is for the kernel's silence, quiet_ms without a reply, not for
 * the whole answer; SYNC_MAX_MS bounds it.
 */
int nl_sync(int quiet_ms)
{
	struct pollfd p[2] = { { .fd = kdp.gnl.fd, .events = POLLIN },
			       { .fd = kdp.rtnl.fd, .events = POLLIN } };
	struct usl_progress_wait w;
	unsigned heard = 0;
	int64_t left;

	usl_progress_wait_start(&w, usl_clock_now(&usl_clock_monotonic), usl_time_ms(quiet_ms),
				usl_time_ms(SYNC_MAX_MS));
	while (chan_busy(&kdp.gnl) || chan_busy(&kdp.rtnl)) {
		nl_flush();
		left = usl_time_to_ms(usl_progress_wait_left(&w, usl_clock_now(&usl_clock_monotonic)));
		if (left <= 0) {
			sync_timed_out(&w, heard);
			return -ETIMEDOUT;
		}
		if (poll(p, 2, (int)(left < INT_MAX ? left : INT_MAX)) <= 0)	/* closed fd (-1): skipped */
			continue;
		if (p[0].revents)
			nl_read(&kdp.gnl);
		if (p[1].revents)
			nl_read(&kdp.rtnl);
		/* after the reads: a read can be long (the kernel makes a dump's parts in it) */
		usl_progress_wait_heard(&w, usl_clock_now(&usl_clock_monotonic));
		heard++;
	}
	return 0;
}

/* ---- start-up requests, and the family ---------------------------------------- */

void sync_done(struct kreq *r, int err, const char *ext)
{
	struct sync_result *res = r->obj;

	res->err = err;
	snprintf(res->ext, sizeof(res->ext), "%s", ext ? ext : "");
}

/* The group that announces deletions (dp_watch.c): "l2tp" among the nested groups. */
static void family_mcast_groups(const struct nlattr *groups)
{
	const struct nlattr *g;

	mnl_attr_for_each_nested(g, groups) {
		const struct nlattr *tb[CTRL_ATTR_MCAST_GRP_MAX + 1] = { 0 };
		struct attr_table t = { tb, CTRL_ATTR_MCAST_GRP_MAX };

		mnl_attr_parse_nested(g, attr_cb, &t);
		if (tb[CTRL_ATTR_MCAST_GRP_NAME] && tb[CTRL_ATTR_MCAST_GRP_ID] &&
		    mnl_attr_validate(tb[CTRL_ATTR_MCAST_GRP_NAME], MNL_TYPE_NUL_STRING) == 0 &&
		    strcmp(mnl_attr_get_str(tb[CTRL_ATTR_MCAST_GRP_NAME]), L2TP_GENL_MCGROUP) == 0)
			kdp.mcgrp = attr_u32(tb[CTRL_ATTR_MCAST_GRP_ID]);
	}
}

static void family_data(struct kreq *r, const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[CTRL_ATTR_MAX + 1] = { 0 };
	struct attr_table t = { tb, CTRL_ATTR_MAX };

	(void)r;
	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), attr_cb, &t);
	if (tb[CTRL_ATTR_FAMILY_ID] && mnl_attr_validate(tb[CTRL_ATTR_FAMILY_ID], MNL_TYPE_U16) == 0)
		kdp.family = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	if (tb[CTRL_ATTR_MCAST_GROUPS] != NULL)
		family_mcast_groups(tb[CTRL_ATTR_MCAST_GROUPS]);
}

/* The one blocking request the brief allows at start-up: which id is "l2tp"? */
int family_resolve(char *err, size_t errlen)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(scratch);
	struct sync_result res = { 0 };
	struct genlmsghdr *g;

	nlh->nlmsg_type = GENL_ID_CTRL;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = CTRL_CMD_GETFAMILY;
	g->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, L2TP_GENL_NAME);
	if (kreq_submit(nlh, &res, sync_done, family_data) == NULL || nl_sync(SYNC_MS) < 0) {
		snprintf(err, errlen, "generic netlink controller did not answer");
		return -1;
	}
	if (res.err == -ENOENT || (res.err == 0 && kdp.family == 0)) {
		snprintf(err, errlen, "this kernel has no L2TP netlink family \"%s\" (modules "
			 "l2tp_netlink, l2tp_eth, l2tp_ip, l2tp_ip6 missing or not loadable)",
			 L2TP_GENL_NAME);
		return -1;
	}
	if (res.err != 0) {
		snprintf(err, errlen, "resolving the \"%s\" netlink family: %s", L2TP_GENL_NAME,
			 strerror(-res.err));
		return -1;
	}
	return 0;
}

uint16_t attr_u16(const struct nlattr *a)
{
	return a && mnl_attr_validate(a, MNL_TYPE_U16) == 0 ? mnl_attr_get_u16(a) : 0;
}

uint8_t attr_u8(const struct nlattr *a)
{
	return a && mnl_attr_validate(a, MNL_TYPE_U8) == 0 ? mnl_attr_get_u8(a) : 0;
}

/* ---- the sockets ------------------------------------------------------------- */

/*
 * Answers for a whole window must fit in the receive buffer; ask for a big
 * one (FORCE: we have CAP_NET_ADMIN anyway) and size the window from what
 * the kernel granted.
 */
static void nl_buffers(struct nlchan *ch)
{
	int sz = NL_RCVBUF, one = 1;
	socklen_t len = sizeof(sz);

	if (setsockopt(ch->fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(ch->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (getenv("L2TPV3D_NL_RCVBUF") != NULL) {	/* tests: provoke ENOBUFS */
		sz = atoi(getenv("L2TPV3D_NL_RCVBUF"));
		setsockopt(ch->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	getsockopt(ch->fd, SOL_SOCKET, SO_RCVBUF, &sz, &len);
	ch->window_max = (unsigned)sz / ch->answer_cost;
	if (ch->window_max > WINDOW_MAX)
		ch->window_max = WINDOW_MAX;
	if (ch->window_max < WINDOW_MIN)
		ch->window_max = WINDOW_MIN;
	ch->window = ch->window_max;
	/* small ACKs (no copy of the request), and the kernel's reason on errors */
	setsockopt(ch->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(ch->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
}

int nl_open(struct nlchan *ch, int proto, const char *name, unsigned answer_cost,
	    char *err, size_t errlen)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };	/* the kernel picks our port */

	ch->name = name;
	ch->answer_cost = answer_cost;
	ch->rx_max = RX_ROUNDS * RX_BATCH;
	usl_list_init(&ch->queue);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		snprintf(err, errlen, "%s socket: %s", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	ch->fd = fd;
	nl_buffers(ch);
	ch->ev = usl_fd_add(l2tpd.loop, fd, USL_READ, on_nl_readable, ch);
	if (ch->ev == NULL) {
		snprintf(err, errlen, "%s: event registration failed", name);
		return -1;
	}
	return 0;
}

/* Drops the requests a channel never sent (its queue exists once it was opened). */
void chan_drop_queue(struct nlchan *ch)
{
	while (ch->name != NULL && !usl_list_empty(&ch->queue))
		kreq_unqueue(usl_list_first_entry(&ch->queue, struct kreq, qlink));
}
