/*
 * src/ctl.c - the control socket: JSON lines over a UNIX stream socket.
 *
 * Every request gets exactly one final reply carrying its id and a status
 * (enum ctl_status).  Requests that wait for the peer (tunnel/session
 * create) park a struct ctl_req on the object; the reply is written when
 * the object comes up or fails.  If the client goes away first, the
 * request stays parked but detached, and its reply is discarded.
 * Connections are libevent bufferevents on the daemon's loop, so a slow
 * client never blocks it.
 *
 * What a client can make the daemon hold is bounded: its requests are read
 * and run only while less than CTL_OUTPUT_PAUSE of replies wait for it (so
 * a client that pipelines and never reads costs one reply more than that),
 * and a client with more than ctl_max_output unread that reads nothing for
 * CTL_STALL_MS (a monitor client: at once) is disconnected.  At most
 * ctl_max_clients are connected; more are accepted, told why in one reply
 * line and closed.  Running out of descriptors does the same through a
 * reserve descriptor, and when even that fails accepting pauses, since the
 * listening socket stays readable and would otherwise spin the loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "acceptor.h"
#include "dp.h"
#include "event.h"
#include "l2tpv3d.h"
#include "usl/escape.h"
#include "usl/json.h"
#include "usl/log.h"

#define CTL_OUTPUT_PAUSE	(256u << 10)	/* more unread output than this: requests wait */
#define CTL_OUTPUT_RESUME	(CTL_OUTPUT_PAUSE / 2)
#define CTL_STALL_MS		2000	/* over ctl_max_output and reading nothing this long */
#define CTL_IDLE_SWEEP_MS	5000	/* how often idle clients are looked for */

struct ctl_conn {
	struct usl_list link;		/* conns */
	struct bufferevent *bev;
	struct evbuffer_cb_entry *out_cb;	/* counts what the client read */
	struct usl_list reqs;		/* parked requests of this connection */
	bool monitor;
	int64_t monitor_id;
	uint32_t monitor_events;	/* bit per enum event_kind it asked for */
	bool closing;			/* flush the output, then close */
	bool dropped;			/* discard the output; freed by the timer */
	bool paused;			/* input not read until the output drains */
	bool req_quiet;			/* the request being dispatched asked for no data */
	uint64_t drained;		/* output bytes the socket took (the client read them) */
	uint64_t drained_mark;		/* drained when the stall timer was armed */
	usl_time active_at;		/* its last request, or its connect */
	struct usl_timer timer;		/* stall check, or the deferred free of a drop */
};

struct ctl_req {
	struct usl_list obj_link;	/* on the tunnel/session waiting list */
	struct usl_list conn_link;	/* on the connection's list */
	struct ctl_conn *conn;		/* NULL once the client is gone */
	int64_t id;
	bool quiet;			/* a success is answered without data */
};

static void ctl_refuse(int cfd, const char *err);
static struct acceptor ctl_acceptor = {
	.fd = -1, .reserve_fd = -1, .rl = LOG_RATELIMIT_INIT(10, 5), .what = "control",
	.refuse = ctl_refuse, .reclaim = tunnel_reclaim_held_socket,
	.starved = &l2tpd.ctl.accept_emfile,
};
static char ctl_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static struct usl_list conns = USL_LIST_INIT(conns);
static struct usl_timer idle_timer;	/* closes clients idle past ctl_idle_timeout */
static unsigned n_monitors;
static struct log_ratelimit accept_rl = LOG_RATELIMIT_INIT(10, 5);
static struct log_ratelimit slow_rl = LOG_RATELIMIT_INIT(10, 5);

/* The control socket's counters are l2tpd.ctl: metrics.c reads them without calling in here. */

typedef void (*ctl_handler)(struct ctl_conn *c, int64_t id, const struct usl_json_value *args);

/* ---- replies ------------------------------------------------------------ */

static size_t conn_pending(const struct ctl_conn *c)
{
	return evbuffer_get_length(bufferevent_get_output(c->bev));
}

/*
 * Throws away what the client has not read and frees it on the next turn
 * of the loop: callers may be walking the connection list or still using c.
 */
static void conn_drop(struct ctl_conn *c, const char *why)
{
	size_t unread = conn_pending(c);

	l2tpd.ctl.dropped_slow++;
	log_warnx_rl(&slow_rl, usl_timerset_now(l2tpd.timers),
		     "control: %sclient too slow (%zu bytes unread), disconnecting it", why, unread);
	c->closing = c->dropped = true;
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	usl_timer_arm(l2tpd.timers, &c->timer, usl_time_ms(0));
}

/* One reply or event line: s (len bytes, no newline) and its newline. */
static void conn_write_line(struct ctl_conn *c, const char *s, size_t len)
{
	if (c->dropped)
		return;
	bufferevent_write(c->bev, s, len);
	bufferevent_write(c->bev, "\n", 1);
	/* a big reply may pass the cap: the client gets CTL_STALL_MS to start reading it */
	if (conn_pending(c) > l2tpd.conf->ctl_max_output && !usl_timer_armed(&c->timer)) {
		c->drained_mark = c->drained;
		usl_timer_arm(l2tpd.timers, &c->timer, usl_time_ms(CTL_STALL_MS));
	}
}

static void conn_write_json(struct ctl_conn *c, json_object *o)
{
	size_t len;
	const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);

	conn_write_line(c, s, len);
}

static json_object *reply_json(int64_t id, enum ctl_status st, const char *err, json_object *data)
{
	json_object *o = json_object_new_object();

	json_add_int(o, "id", id);
	json_add_int(o, "status", st);
	json_add_str(o, "status_name", ctl_status_name(st));
	if (err != NULL && err[0])
		json_add_str(o, "error", err);
	if (data != NULL)
		json_object_object_add(o, "data", data);
	return o;
}

/* A quiet request's success is its status alone; a failure keeps its data (the reason). */
static void conn_reply_ex(struct ctl_conn *c, int64_t id, bool quiet, enum ctl_status st,
			  const char *err, json_object *data)
{
	json_object *o;
	char line[CTL_STATUS_LINE_MAX];

	if (quiet && st == CTL_OK && data != NULL) {
		json_object_put(data);
		data = NULL;
	}
	/*
	 * A status alone (every quiet success) is written as reply_json() would
	 * put it, without building and freeing an object: a provisioning batch
	 * gets thousands of them.  Status names need no escaping.
	 */
	if (data == NULL && (err == NULL || !err[0]))
		return conn_write_line(c, line, ctl_status_line(line, (long long)id, (int)st));
	o = reply_json(id, st, err, data);
	conn_write_json(c, o);
	json_object_put(o);
}

static void conn_reply(struct ctl_conn *c, int64_t id, enum ctl_status st, const char *err,
		       json_object *data)
{
	conn_reply_ex(c, id, c->req_quiet, st, err, data);
}

static struct ctl_req *req_park(struct ctl_conn *c, int64_t id)
{
	struct ctl_req *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->conn = c;
	r->id = id;
	r->quiet = c->req_quiet;
	usl_list_init(&r->obj_link);
	usl_list_add_tail(&c->reqs, &r->conn_link);
	return r;
}

static void ctl_req_reply(struct ctl_req *r, enum ctl_status st, const char *err,
			  json_object *data)
{
	if (r->conn != NULL) {
		conn_reply_ex(r->conn, r->id, r->quiet, st, err, data);
		usl_list_del(&r->conn_link);
	} else if (data != NULL) {
		json_object_put(data);
	}
	free(r);
}

static struct ctl_req *ctl_req_from_link(struct usl_list *l)
{
	return usl_container_of(l, struct ctl_req, obj_link);
}

static json_object *result_json(const struct l2tp_result *r, bool stopccn)
{
	json_object *o = json_object_new_object();

	json_add_int(o, "code", r->result);
	json_add_str(o, "name", stopccn ? l2tp_stopccn_result_name(r->result)
					: l2tp_cdn_result_name(r->result));
	json_add_int(o, "error", r->has_error ? r->error : 0);
	if (r->has_error)
		json_add_str(o, "error_name", l2tp_error_code_name(r->error));
	json_object_object_add(o, "message",
			       json_object_new_string_len(r->message.p ? (const char *)r->message.p : "",
							  r->message.p ? r->message.len : 0));
	return o;
}

/* The names of the event's objects, as they are now: the IDs may resolve to nothing later. */
static void event_names_json(json_object *ev, const struct tunnel *t, const struct session *s)
{
	struct event_names n;

	event_names_get(t, s, &n);
	json_add_str(ev, "tunnel_name", n.tunnel);
	json_add_str(ev, "peer_entry", n.peer_entry);
	json_add_str(ev, "description", n.description);
	if (s == NULL)
		return;
	json_add_str(ev, "session_name", n.session);
	json_add_str(ev, "remote_end_id", n.remote_end_id);
	json_add_str(ev, "ifname", n.ifname);
	json_add_str(ev, "pw_type", n.pw_type);
}

/* Broadcasts an event to every `monitor` client that asked for its kind. */
static void ctl_event(enum event_kind kind, const struct tunnel *t, const struct session *s,
		      const struct l2tp_result *why)
{
	struct usl_list *pos;
	json_object *ev = NULL;
	struct timespec ts;
	char a[64];

	usl_list_foreach(pos, &conns) {
		struct ctl_conn *c = usl_container_of(pos, struct ctl_conn, link);
		json_object *o;

		if (!c->monitor || c->closing || !(c->monitor_events & (1u << kind)))
			continue;
		if (ev == NULL) {
			clock_gettime(CLOCK_REALTIME, &ts);
			ev = json_object_new_object();
			json_add_str(ev, "event", event_name(kind));
			json_add_int(ev, "tunnel_id", t->id);
			if (s != NULL)
				json_add_int(ev, "session_id", s->id);
			tunnel_peer_str(t, a, sizeof(a));
			json_add_str(ev, "peer", a);
			event_names_json(ev, t, s);
			json_object_object_add(ev, "time",
				json_object_new_double(ts.tv_sec + ts.tv_nsec / 1e9));
			if (why != NULL)
				json_object_object_add(ev, "result", result_json(why, s == NULL));
		}
		o = json_object_new_object();
		json_add_int(o, "id", c->monitor_id);
		json_object_object_add(o, "event", json_object_get(ev));
		conn_write_json(c, o);
		json_object_put(o);
		/* events keep coming whether it reads or not: no grace */
		if (conn_pending(c) > l2tpd.conf->ctl_max_output)
			conn_drop(c, "monitor ");
	}
	if (ev != NULL)
		json_object_put(ev);
}

/*
 * Requests parked on an object get their answer: the object when it came
 * up, else the status and reason (the peer's result, when it gave one).
 */
static void ctl_reply_waiters(const struct l2tpd_event *ev)
{
	struct usl_list *pos, *tmp;

	usl_list_foreach_safe(pos, tmp, ev->waiters) {
		struct ctl_req *r = ctl_req_from_link(pos);
		json_object *data = NULL;

		usl_list_del(pos);
		if (ev->st == CTL_OK && r->conn != NULL && !r->quiet)
			data = ev->s ? session_json(ev->s, false) : tunnel_json(ev->t, false);
		else if (ev->why != NULL) {
			data = json_object_new_object();
			json_object_object_add(data, "result", result_json(ev->why, ev->s == NULL));
		}
		ctl_req_reply(r, ev->st, ev->err, data);
	}
}

/* The control socket's subscription to tunnel and session events. */
static void ctl_restarting(void);

static void ctl_on_event(const struct l2tpd_event *ev, void *arg)
{
	(void)arg;
	if (ev->kind == EV_WAITERS)
		ctl_reply_waiters(ev);
	else if (ev->kind == EV_RESTARTING)
		ctl_restarting();
	else if (event_name(ev->kind) != NULL)
		ctl_event(ev->kind, ev->t, ev->s, ev->why);
}

/* ---- argument helpers --------------------------------------------------- */

struct argerr {
	char msg[256];
};

/*
 * The request being dispatched, read by usl_json into a document reused
 * from line to line (requests are dispatched one at a time): json-c's
 * tokener built and freed a tree, and made and freed a C locale, for each
 * line, a third of the LAC's instructions in a batch.
 */
static struct usl_json req_doc;

/* The argument named k; NULL when absent or null. */
static const struct usl_json_value *arg(const struct usl_json_value *args, const char *k)
{
	const struct usl_json_value *v = usl_json_get(&req_doc, args, k);

	return v != NULL && v->type != USL_JSON_NULL ? v : NULL;
}

/* A scalar's text: a string's, or a number's or true/false as written. */
static const char *arg_str(const struct usl_json_value *args, const char *k)
{
	const struct usl_json_value *v = arg(args, k);

	return v != NULL ? v->text : NULL;
}

/*
 * "description": operator text, as the configuration takes it (printable,
 * shorter than CFG_DESC_MAX); *out NULL when absent.  false (msg set) when bad.
 */
static bool arg_description(const struct usl_json_value *args, const char **out, struct argerr *e)
{
	const struct usl_json_value *v = arg(args, "description");

	*out = NULL;
	if (v == NULL)
		return true;
	if (v->type != USL_JSON_STRING) {
		snprintf(e->msg, sizeof(e->msg), "'description' must be a string");
		return false;
	}
	if (v->len >= CFG_DESC_MAX) {
		snprintf(e->msg, sizeof(e->msg), "'description' is %zu characters (valid: at most %d)",
			 v->len, CFG_DESC_MAX - 1);
		return false;
	}
	for (size_t i = 0; i < v->len; i++) {
		if ((unsigned char)v->text[i] < 0x20 || v->text[i] == 0x7f) {
			snprintf(e->msg, sizeof(e->msg), "'description' has a control character at "
				 "offset %zu (valid: printable characters)", i);
			return false;
		}
	}
	*out = v->text;
	return true;
}

/* A number, or a string of decimal digits, in 0..UINT32_MAX. */
static bool value_u32(const struct usl_json_value *v, uint32_t *out)
{
	uint64_t n = 0;

	if (v->type == USL_JSON_INT) {
		if (!v->in_range || v->i < 0 || v->i > UINT32_MAX)
			return false;
		*out = (uint32_t)v->i;
		return true;
	}
	if (v->type != USL_JSON_STRING || v->len == 0 || v->len > 10)
		return false;
	for (size_t i = 0; i < v->len; i++) {
		if (v->text[i] < '0' || v->text[i] > '9')
			return false;
		n = n * 10 + (uint64_t)(v->text[i] - '0');
	}
	if (n > UINT32_MAX)
		return false;
	*out = (uint32_t)n;
	return true;
}

/* u32 argument: *out untouched and true when absent; false (msg set) when bad. */
static bool arg_u32(const struct usl_json_value *args, const char *k, uint32_t *out, struct argerr *e)
{
	const struct usl_json_value *v = arg(args, k);

	if (v == NULL || value_u32(v, out))
		return true;
	snprintf(e->msg, sizeof(e->msg), "'%s' must be an unsigned 32-bit integer", k);
	return false;
}

/* true/false; as json-c read them, a number is true when not 0 and a string when not empty. */
static bool arg_bool(const struct usl_json_value *args, const char *k, bool dflt)
{
	const struct usl_json_value *v = arg(args, k);

	if (v == NULL)
		return dflt;
	switch (v->type) {
	case USL_JSON_BOOL:
		return v->b;
	case USL_JSON_INT:
	case USL_JSON_NUMBER:
		return v->d != 0;
	case USL_JSON_STRING:
		return v->len != 0;
	default:
		return false;
	}
}

/* The one argument that takes a list (monitor's "events"); every other takes one value. */
static bool arg_takes_list(const char *key)
{
	return strcmp(key, "events") == 0;
}

/*
 * Every argument is one of known (names holding a NUL are none), of its
 * kind of value, a string without NUL.
 */
static bool arg_check_known(const struct usl_json_value *args, const char *const *known,
			    struct argerr *e)
{
	const struct usl_json_value *m;

	if (args == NULL)
		return true;
	if (args->type != USL_JSON_OBJECT) {
		snprintf(e->msg, sizeof(e->msg), "'args' must be an object");
		return false;
	}
	for (m = usl_json_first(&req_doc, args); m != NULL; m = usl_json_next(&req_doc, m)) {
		const char *const *k;

		for (k = known; *k != NULL; k++)
			if (usl_json_key_is(m, *k))
				break;
		if (*k == NULL) {
			char key[96];

			usl_str_escape(key, sizeof(key), m->key, m->key_len);
			snprintf(e->msg, sizeof(e->msg), "unknown argument '%s'", key);
			return false;
		}
		if ((m->type == USL_JSON_OBJECT || m->type == USL_JSON_ARRAY) &&
		    !arg_takes_list(m->key)) {
			snprintf(e->msg, sizeof(e->msg), "'%s' must be a single value, not %s",
				 m->key, usl_json_type_name(m->type));
			return false;
		}
		/* a C string would end there: the rest would be dropped unseen */
		if (m->type == USL_JSON_STRING && strlen(m->text) != m->len) {
			snprintf(e->msg, sizeof(e->msg), "'%s' holds a NUL character", m->key);
			return false;
		}
	}
	return true;
}

/* How a request names a tunnel or a session: its ID under idkey, or its name under namekey. */
struct ref_keys {
	const char *idkey, *namekey;
	bool optional;			/* neither given: no object, and no error */
};

static const struct ref_keys tunnel_by_ref = { "tunnel_id", "name", false };
static const struct ref_keys tunnel_by_arg = { "tunnel_id", "tunnel", false };
static const struct ref_keys tunnel_filter = { "tunnel_id", "tunnel", true };
static const struct ref_keys session_by_ref = { "session_id", "name", false };

/*
 * Reads the reference: false when it replied with the error.  True with
 * *oid (non-zero) or *oname set, or neither when optional and absent.
 */
static bool arg_ref(struct ctl_conn *c, int64_t id, const struct usl_json_value *args,
		    const struct ref_keys *k, uint32_t *oid, const char **oname)
{
	struct argerr e;

	*oid = 0;
	*oname = arg_str(args, k->namekey);
	if (!arg_u32(args, k->idkey, oid, &e)) {
		conn_reply(c, id, CTL_E_INVALID, e.msg, NULL);
		return false;
	}
	if (*oid != 0 && *oname != NULL) {
		snprintf(e.msg, sizeof(e.msg), "give only one of '%s' and '%s'", k->idkey, k->namekey);
		conn_reply(c, id, CTL_E_INVALID, e.msg, NULL);
		return false;
	}
	if (*oid == 0 && *oname == NULL && !k->optional) {
		snprintf(e.msg, sizeof(e.msg), "missing argument '%s' (or '%s')", k->idkey, k->namekey);
		conn_reply(c, id, CTL_E_INVALID, e.msg, NULL);
		return false;
	}
	return true;
}

/*
 * The tunnel a request names (objref.c), for every command that takes
 * one.  False when it replied with the error; true with *out NULL when the
 * reference is optional and absent.
 */
static bool arg_tunnel(struct ctl_conn *c, int64_t id, const struct usl_json_value *args,
		       const struct ref_keys *k, struct tunnel **out)
{
	char err[1024];
	const char *name;
	uint32_t tid;

	*out = NULL;
	if (!arg_ref(c, id, args, k, &tid, &name))
		return false;
	if (tid == 0 && name == NULL)
		return true;
	if ((*out = objref_tunnel(tid, name, err, sizeof(err))) == NULL)
		conn_reply(c, id, CTL_E_NOT_FOUND, err, NULL);
	return *out != NULL;
}

/* The usual start of a handler on one tunnel: known arguments only, then the tunnel. */
static bool tunnel_request(struct ctl_conn *c, int64_t id, const struct usl_json_value *args,
			   const char *const *known, const struct ref_keys *k, struct tunnel **out)
{
	struct argerr e;

	if (!arg_check_known(args, known, &e)) {
		conn_reply(c, id, CTL_E_INVALID, e.msg, NULL);
		return false;
	}
	return arg_tunnel(c, id, args, k, out);
}

/* The session a request names, as arg_tunnel(); sessions are never optional. */
static struct session *arg_session(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	struct session *s;
	char err[1024];
	const char *name;
	uint32_t sid;

	if (!arg_ref(c, id, args, &session_by_ref, &sid, &name))
		return NULL;
	if ((s = objref_session(sid, name, err, sizeof(err))) == NULL)
		conn_reply(c, id, CTL_E_NOT_FOUND, err, NULL);
	return s;
}

/* ---- tunnel commands ---------------------------------------------------- */

/* Applies the per-request overrides of `tunnel create` to a profile copy. */
static bool tunnel_args_apply(const struct usl_json_value *args, struct tunnel_profile *p, struct argerr *e)
{
	const char *v;
	uint32_t hello = UINT32_MAX;

	if ((v = arg_str(args, "encap")) != NULL) {
		if (strcmp(v, "udp") && strcmp(v, "ip")) {
			snprintf(e->msg, sizeof(e->msg), "bad value '%s' for 'encap' (valid: udp, ip)", v);
			return false;
		}
		p->encap = strcmp(v, "ip") == 0 ? L2TP_ENCAP_IP : L2TP_ENCAP_UDP;
	}
	if ((v = arg_str(args, "digest")) != NULL) {
		if (!strcmp(v, "none"))
			p->digest = CFG_DIGEST_NONE;
		else if (!strcmp(v, "md5"))
			p->digest = CFG_DIGEST_MD5;
		else if (!strcmp(v, "sha1"))
			p->digest = CFG_DIGEST_SHA1;
		else {
			snprintf(e->msg, sizeof(e->msg), "bad value '%s' for 'digest' (valid: none, md5, sha1)", v);
			return false;
		}
	}
	if ((v = arg_str(args, "udp_src_port")) != NULL) {
		if (strcmp(v, "1701") && strcmp(v, "ephemeral")) {
			snprintf(e->msg, sizeof(e->msg), "bad value '%s' for 'udp_src_port' (valid: 1701, ephemeral)", v);
			return false;
		}
		p->udp_src_port = strcmp(v, "1701") == 0 ? CFG_SPORT_1701 : CFG_SPORT_EPHEMERAL;
	}
	if (!arg_u32(args, "hello_interval", &hello, e))
		return false;
	if (hello != UINT32_MAX)
		p->hello_interval_ms = hello * 1000;
	return true;
}

static void h_tunnel_create(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	static const char *const known[] = { "peer", "pool", "local", "encap", "profile", "name",
		"secret", "digest", "hello_interval", "udp_src_port", "wait", "description", NULL };
	const char *peer = arg_str(args, "peer"), *local = arg_str(args, "local");
	const char *pool = arg_str(args, "pool");
	const char *pname = arg_str(args, "profile"), *secret = arg_str(args, "secret");
	const char *descr;
	const struct tunnel_profile *tp;
	struct tunnel_profile prof;
	struct cfg_addr pa, la = { .len = 0 };
	enum ctl_status st;
	struct argerr e;
	struct tunnel *t;
	char err[256];

	la.ss.ss_family = AF_UNSPEC;
	if (!arg_check_known(args, known, &e) || !arg_description(args, &descr, &e))
		return conn_reply(c, id, CTL_E_INVALID, e.msg, NULL);
	if (peer != NULL && pool != NULL)
		return conn_reply(c, id, CTL_E_INVALID, "give only one of 'peer' and 'pool'", NULL);
	if (peer == NULL && pool == NULL)
		return conn_reply(c, id, CTL_E_INVALID, "missing argument 'peer' (or 'pool')", NULL);
	if (pool != NULL && config_lns_pool(l2tpd.conf, pool) == NULL) {
		snprintf(err, sizeof(err), "no LNS pool named '%s'", pool);
		return conn_reply(c, id, CTL_E_NOT_FOUND, err, NULL);
	}
	if (peer != NULL && !config_parse_addr(peer, l2tpd.conf->udp_port, &pa)) {
		snprintf(err, sizeof(err), "bad address '%s' for 'peer'", peer);
		return conn_reply(c, id, CTL_E_INVALID, err, NULL);
	}
	if (local != NULL && !config_parse_addr(local, 0, &la)) {
		snprintf(err, sizeof(err), "bad address '%s' for 'local'", local);
		return conn_reply(c, id, CTL_E_INVALID, err, NULL);
	}
	tp = config_tunnel_profile(l2tpd.conf, pname ? pname : "default");
	if (tp == NULL) {
		snprintf(err, sizeof(err), "no tunnel profile named '%s'", pname);
		return conn_reply(c, id, CTL_E_NOT_FOUND, err, NULL);
	}
	prof = *tp;
	if (!tunnel_args_apply(args, &prof, &e))
		return conn_reply(c, id, CTL_E_INVALID, e.msg, NULL);
	if (prof.digest != CFG_DIGEST_NONE && !(secret && secret[0]) && !prof.secret[0] &&
	    !l2tpd.conf->secret[0])
		return conn_reply(c, id, CTL_E_INVALID, "digest authentication needs a 'secret'", NULL);
	if (pool != NULL)
		t = pool_connect(pool, &la, &prof, arg_str(args, "name"), descr, secret, ORIGIN_CLI,
				 &st, err, sizeof(err));
	else
		t = tunnel_connect(&pa, &la, &prof, arg_str(args, "name"), descr, secret,
				   ORIGIN_CLI, &st, err, sizeof(err));
	if (t == NULL)
		return conn_reply(c, id, st, err, NULL);
	if (!arg_bool(args, "wait", true))
		return conn_reply(c, id, CTL_OK, NULL, tunnel_json(t, false));
	struct ctl_req *r = req_park(c, id);
	if (r == NULL)
		return conn_reply(c, id, CTL_E_INTERNAL, "out of memory", NULL);
	usl_list_add_tail(&t->waiters, &r->obj_link);
}

static void h_tunnel_delete(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	static const char *const known[] = { "tunnel_id", "name", "result", NULL };
	uint32_t result = L2TP_STOPCCN_NORMAL;
	struct argerr e;
	struct tunnel *t;

	if (!arg_check_known(args, known, &e) || !arg_u32(args, "result", &result, &e))
		return conn_reply(c, id, CTL_E_INVALID, e.msg, NULL);
	if (result == 0 || result > 0xffff)
		return conn_reply(c, id, CTL_E_INVALID, "'result' must be 1..65535", NULL);
	if (!arg_tunnel(c, id, args, &tunnel_by_ref, &t))
		return;
	tunnel_delete(t, (uint16_t)result, "deleted by operator");
	conn_reply(c, id, CTL_OK, NULL, json_object_new_object());
}

static void h_tunnel_show(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	static const char *const known[] = { "tunnel_id", "name", NULL };
	struct tunnel *t;

	if (tunnel_request(c, id, args, known, &tunnel_by_ref, &t))
		conn_reply(c, id, CTL_OK, NULL, tunnel_json(t, true));
}

/* debug on|off: a tunnel (tunnel_id or tunnel: its name) or a peer's address. */
static void h_debug(struct ctl_conn *c, int64_t id, const struct usl_json_value *args, bool on)
{
	static const char *const known[] = { "tunnel_id", "tunnel", "peer", NULL };
	const char *peer = arg_str(args, "peer");
	struct cfg_addr pa;
	struct argerr e;
	struct tunnel *t;

	if (!arg_check_known(args, known, &e))
		return conn_reply(c, id, CTL_E_INVALID, e.msg, NULL);
	if (peer != NULL) {
		if (!config_parse_addr(peer, 0, &pa))
			return conn_reply(c, id, CTL_E_INVALID, "'peer' must be an address", NULL);
		if (tunnel_debug_peer((struct sockaddr *)&pa.ss, on) < 0)
			return conn_reply(c, id, CTL_E_LIMIT, "out of memory", NULL);
		return conn_reply(c, id, CTL_OK, NULL, tunnel_debug_json());
	}
	if (!arg_tunnel(c, id, args, &tunnel_by_arg, &t))
		return;
	tunnel_set_debug(t, on);
	conn_reply(c, id, CTL_OK, NULL, tunnel_debug_json());
}

static void h_debug_on(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	h_debug(c, id, args, true);
}

static void h_debug_off(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	h_debug(c, id, args, false);
}

static void h_tunnel_list(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	json_object *arr = json_object_new_array(), *o = json_object_new_object();
	struct usl_rb_node *n;

	(void)args;
	for (n = usl_rb_first(&l2tpd.tunnel_order); n != NULL; n = usl_rb_next(n)) {
		const struct tunnel *t = usl_rb_entry(n, struct tunnel, by_order);
		json_object *to = tunnel_json(t, false);

		/* a static tunnel's old connection, its name gone to a new one */
		if (t->name != NULL && !t->name_indexed && l2tp_cc_state(t->cc) == L2TP_CC_STOPPING)
			json_object_object_add(to, "held", json_object_new_boolean(1));
		json_object_array_add(arr, to);
	}
	json_object_object_add(o, "tunnels", arr);
	json_object_object_add(o, "retrying", static_retries_json(false));
	json_object_object_add(o, "shutdown", static_shutdown_json(false));
	conn_reply(c, id, CTL_OK, NULL, o);
}

/* ---- session commands --------------------------------------------------- */

static bool session_args_apply(const struct usl_json_value *args, struct session_profile *p, struct argerr *e)
{
	const char *v;
	uint32_t cookie = UINT32_MAX;
	int n;

	if ((v = arg_str(args, "pw_type")) != NULL) {
		if ((n = config_pw_type_parse(v)) < 0) {
			snprintf(e->msg, sizeof(e->msg), "bad value '%s' for 'pw_type' (valid: eth, eth_vlan, ppp)", v);
			return false;
		}
		p->pw_type = (uint16_t)n;
	}
	if (!arg_u32(args, "cookie_len", &cookie, e))
		return false;
	if (cookie != UINT32_MAX) {
		if (cookie != 0 && cookie != 4 && cookie != 8) {
			snprintf(e->msg, sizeof(e->msg), "'cookie_len' must be 0, 4 or 8");
			return false;
		}
		p->cookie_len = (uint8_t)cookie;
	}
	if ((v = arg_str(args, "l2spec")) != NULL) {
		if (strcmp(v, "none") && strcmp(v, "default")) {
			snprintf(e->msg, sizeof(e->msg), "bad value '%s' for 'l2spec' (valid: none, default)", v);
			return false;
		}
		p->l2spec = strcmp(v, "default") == 0;
	}
	if ((v = arg_str(args, "data_seq")) != NULL) {
		if ((n = config_data_seq_parse(v)) < 0) {
			snprintf(e->msg, sizeof(e->msg), "bad value '%s' for 'data_seq' (valid: none, non-ip, all)", v);
			return false;
		}
		p->data_seq = (uint16_t)n;
	}
	if ((v = arg_str(args, "ifname")) != NULL) {
		if (strlen(v) == 0 || strlen(v) >= 16) {
			snprintf(e->msg, sizeof(e->msg), "'ifname' must be 1 to 15 characters");
			return false;
		}
		snprintf(p->ifname, sizeof(p->ifname), "%s", v);
	}
	return true;
}

static void h_session_create(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	static const char *const known[] = { "tunnel_id", "tunnel", "profile", "name", "pw_type",
		"cookie_len", "l2spec", "data_seq", "ifname", "remote_end_id", "wait", "description",
		NULL };
	const char *pname = arg_str(args, "profile"), *descr;
	const struct session_profile *sp;
	struct session_profile prof;
	enum ctl_status st;
	struct argerr e;
	struct tunnel *t;
	struct session *s;
	char err[256];

	if (!tunnel_request(c, id, args, known, &tunnel_by_arg, &t))
		return;
	sp = config_session_profile(l2tpd.conf, pname ? pname : "default");
	if (sp == NULL) {
		snprintf(err, sizeof(err), "no session profile named '%s'", pname);
		return conn_reply(c, id, CTL_E_NOT_FOUND, err, NULL);
	}
	prof = *sp;
	if (!session_args_apply(args, &prof, &e) || !arg_description(args, &descr, &e))
		return conn_reply(c, id, CTL_E_INVALID, e.msg, NULL);
	s = session_open(t, &prof, arg_str(args, "name"), descr, arg_str(args, "remote_end_id"),
			 ORIGIN_CLI, &st, err, sizeof(err));
	if (s == NULL)
		return conn_reply(c, id, st, err, NULL);
	if (!arg_bool(args, "wait", true))
		return conn_reply(c, id, CTL_OK, NULL, session_json(s, false));
	struct ctl_req *r = req_park(c, id);
	if (r == NULL)
		return conn_reply(c, id, CTL_E_INTERNAL, "out of memory", NULL);
	usl_list_add_tail(&s->waiters, &r->obj_link);
}

static void h_session_delete(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	static const char *const known[] = { "session_id", "name", "result", NULL };
	uint32_t result = L2TP_CDN_ADMIN;
	struct argerr e;
	struct session *s;

	if (!arg_check_known(args, known, &e) || !arg_u32(args, "result", &result, &e))
		return conn_reply(c, id, CTL_E_INVALID, e.msg, NULL);
	if (result == 0 || result > 0xffff)
		return conn_reply(c, id, CTL_E_INVALID, "'result' must be 1..65535", NULL);
	if ((s = arg_session(c, id, args)) == NULL)
		return;
	session_delete(s, (uint16_t)result, "deleted by operator");
	conn_reply(c, id, CTL_OK, NULL, json_object_new_object());
}

/*
 * The data plane's verdict on the peer's cookies, and what to do about it:
 * the kernel drops frames with a wrong cookie silently, so `show` says so.
 */
static void add_cookie_check(json_object *o, const struct session *s)
{
	struct dp_session_stats st;

	if (s->sess == NULL || l2tpd.dp->session_stats(s, &st) < 0)
		return;
	json_object_object_add(o, "cookie_mismatch", json_object_new_boolean(st.cookie_mismatch));
	if (st.cookie_mismatch)
		json_add_str(o, "warning", "every data frame from the peer was discarded for its "
			     "cookie: the peer ignores our Assigned Cookie (or sends another): set "
			     "cookie_len = 0 for this peer's profile to interoperate");
}

static void h_session_show(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	static const char *const known[] = { "session_id", "name", NULL };
	struct argerr e;
	struct session *s;
	json_object *o, *r;

	if (!arg_check_known(args, known, &e))
		return conn_reply(c, id, CTL_E_INVALID, e.msg, NULL);
	if ((s = arg_session(c, id, args)) == NULL)
		return;
	o = session_json(s, true);
	add_cookie_check(o, s);
	if (s->origin == ORIGIN_CONFIG && (r = pwred_json(name_str(s->name))) != NULL)
		json_object_object_add(o, "redundancy", r);
	conn_reply(c, id, CTL_OK, NULL, o);
}

static void add_tunnel_sessions(json_object *arr, const struct tunnel *t)
{
	const struct usl_list *pos;

	usl_list_foreach(pos, &t->sessions)
		json_object_array_add(arr, session_json(usl_container_of(pos, struct session,
									  tunnel_link), false));
}

static void h_session_list(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	static const char *const known[] = { "tunnel_id", "tunnel", NULL };
	json_object *arr, *o;
	struct usl_rb_node *n;
	struct tunnel *t;

	if (!tunnel_request(c, id, args, known, &tunnel_filter, &t))
		return;
	arr = json_object_new_array();
	if (t != NULL) {
		add_tunnel_sessions(arr, t);
	} else {
		for (n = usl_rb_first(&l2tpd.tunnel_order); n != NULL; n = usl_rb_next(n))
			add_tunnel_sessions(arr, usl_rb_entry(n, struct tunnel, by_order));
	}
	o = json_object_new_object();
	json_object_object_add(o, "sessions", arr);
	if (t == NULL) {
		json_object_object_add(o, "retrying", static_retries_json(true));
		json_object_object_add(o, "shutdown", static_shutdown_json(true));
	}
	conn_reply(c, id, CTL_OK, NULL, o);
}

/* ---- daemon commands ---------------------------------------------------- */

/* {max_ms, over_100ms, over_1s} of a usl_stall */
static json_object *stall_json(const struct usl_stall *st)
{
	json_object *o = json_object_new_object();

	json_add_int(o, "max_ms", usl_time_to_ms(st->max));
	json_add_int(o, "over_100ms", (int64_t)st->over_100ms);
	json_add_int(o, "over_1s", (int64_t)st->over_1s);
	return o;
}

static void h_show_daemon(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	json_object *o = json_object_new_object();
	usl_time up = usl_time_sub(usl_timerset_now(l2tpd.timers), l2tpd.started);

	(void)args;
	json_add_str(o, "version", PACKAGE_VERSION);
	json_add_int(o, "pid", getpid());
	json_add_int(o, "uptime", usl_time_to_ms(up) / 1000);
	json_add_str(o, "event_loop", usl_loop_backend(l2tpd.loop));
	json_add_str(o, "dataplane", l2tpd.dp->name);
	json_add_str(o, "hostname", l2tpd.hostname);
	json_add_str(o, "router_id", router_id_str(l2tpd.router_id));
	json_object_object_add(o, "start", handover_json());
	json_object_object_add(o, "failover", failover_json());
	json_object_object_add(o, "ha", ha_json());
	json_add_str(o, "config", l2tpd.conf_path ? l2tpd.conf_path : "");
	/* "previous": the file was refused at a restart; the previous process's configuration runs */
	json_add_str(o, "config_source", l2tpd.conf_refused != NULL ? "previous" :
		     l2tpd.conf_path != NULL ? "file" : "defaults");
	if (l2tpd.conf_refused != NULL)
		json_add_str(o, "config_refused", l2tpd.conf_refused);
	json_add_int(o, "tunnels", l2tpd.n_tunnels);
	json_add_int(o, "tunnels_established", l2tpd.n_tunnels_up);
	json_add_int(o, "sessions", l2tpd.n_sessions);
	json_add_int(o, "sessions_established", l2tpd.n_sessions_up);
	json_add_int(o, "peers", (int64_t)usl_hash_count(&l2tpd.peers));
	json_add_int(o, "ctl_clients", l2tpd.ctl.clients);
	json_object_object_add(o, "config_id", json_object_new_boolean(l2tpd.conf->snmp_config_id));
	json_object_object_add(o, "pools", pools_json());
	json_add_int(o, "heap_bytes", (int64_t)mallinfo2().uordblks);
	/* the event loop: a callback that blocked, timers run late (starved or blocked) */
	json_object_object_add(o, "loop_busy", stall_json(usl_loop_busy(l2tpd.loop)));
	json_object_object_add(o, "timers_late", stall_json(usl_timerset_late(l2tpd.timers)));
	conn_reply(c, id, CTL_OK, NULL, o);
}

/* Retransmissions of the tunnels alive now (closed ones are already summed). */
static uint64_t live_retransmits(void)
{
	struct usl_rb_node *n;
	struct l2tp_cc_stats st;
	uint64_t sum = 0;

	for (n = usl_rb_first(&l2tpd.tunnel_order); n != NULL; n = usl_rb_next(n)) {
		l2tp_cc_get_stats(usl_rb_entry(n, struct tunnel, by_order)->cc, &st);
		sum += st.retransmits;
	}
	return sum;
}

/* The Prometheus text (metrics.c), as one string. */
static void h_metrics(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	static const char *const known[] = { NULL };
	struct argerr e;
	json_object *o;
	size_t len;
	char *text;

	if (!arg_check_known(args, known, &e))
		return conn_reply(c, id, CTL_E_INVALID, e.msg, NULL);
	text = metrics_text(&len);
	if (text == NULL)
		return conn_reply(c, id, CTL_E_INTERNAL, "out of memory", NULL);
	o = json_object_new_object();
	json_object_object_add(o, "text", json_object_new_string_len(text, (int)len));
	free(text);
	conn_reply(c, id, CTL_OK, NULL, o);
}

static void h_stats(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	static const char *const known[] = { "tunnel_id", "tunnel", NULL };
	json_object *o, *g;
	struct tunnel *t;

	if (!tunnel_request(c, id, args, known, &tunnel_filter, &t))
		return;
	o = json_object_new_object();
	g = json_object_new_object();
	json_object_object_add(g, "msgs_in", msg_type_counts_json(l2tpd.stats.rx_msgs));
	json_object_object_add(g, "msgs_out", msg_type_counts_json(l2tpd.stats.tx_msgs));
	json_add_int(g, "retransmits", (int64_t)(l2tpd.stats.retransmits + live_retransmits()));
	json_object_object_add(g, "drops", drop_counts_json(l2tpd.stats.drops));
	json_add_int(g, "ctl_requests", (int64_t)l2tpd.stats.ctl_requests);
	json_add_int(g, "ctl_clients_refused", (int64_t)l2tpd.ctl.refused);
	json_add_int(g, "ctl_clients_dropped_slow", (int64_t)l2tpd.ctl.dropped_slow);
	json_add_int(g, "ctl_accept_emfile", (int64_t)l2tpd.ctl.accept_emfile);
	json_add_int(g, "ctl_clients_evicted_idle", (int64_t)l2tpd.ctl.evicted_idle);
	json_add_int(g, "refusals_sent", (int64_t)l2tpd.stats.refusals_sent);
	json_add_int(g, "failover_recovered", (int64_t)l2tpd.stats.failover_recovered);
	json_add_int(g, "failover_refused", (int64_t)l2tpd.stats.failover_refused);
	json_add_int(g, "refusals_suppressed", (int64_t)l2tpd.stats.refusals_suppressed);
	json_add_int(g, "half_open_evicted", (int64_t)l2tpd.stats.half_open_evicted);
	json_add_int(g, "hold_sockets_closed", (int64_t)l2tpd.stats.hold_sockets_closed);
	json_add_int(g, "hold_sockets_reclaimed", (int64_t)l2tpd.stats.hold_sockets_reclaimed);
	json_add_int(g, "udp_rcvbuf_errors", (int64_t)transport_udp_rcvbuf_errors());
	json_add_int(g, "rx_datagrams", (int64_t)l2tpd.stats.rx_datagrams);
	json_add_int(g, "tx_datagrams", (int64_t)l2tpd.stats.tx_datagrams);
	json_add_int(g, "tx_errors", (int64_t)l2tpd.stats.tx_errors);
	json_object_object_add(o, "global", g);
	if (t != NULL) {
		json_object *tj = tunnel_json(t, true), *cnt;
		if (json_object_object_get_ex(tj, "counters", &cnt))
			json_object_object_add(o, "tunnel", json_object_get(cnt));
		json_object_put(tj);
	}
	conn_reply(c, id, CTL_OK, NULL, o);
}

/*
 * Zeroes what `stats` shows daemon-wide (not the kernel's UDP receive
 * errors).  Retransmissions are shown as the closed tunnels' sum plus the
 * live ones': the sum restarts at 0 by owing what the live tunnels have
 * counted so far (unsigned arithmetic wraps back as they count on).
 */
static void stats_reset_global(void)
{
	uint64_t live = live_retransmits();

	memset(&l2tpd.stats, 0, sizeof(l2tpd.stats));
	l2tpd.stats.retransmits = 0 - live;
	l2tpd.ctl.refused = l2tpd.ctl.dropped_slow = l2tpd.ctl.accept_emfile = 0;
	l2tpd.ctl.evicted_idle = 0;
	log_info("control: counters reset");
}

/* The daemon-wide retransmissions keep this tunnel's, which they add up. */
static void stats_reset_tunnel(struct tunnel *t)
{
	struct l2tp_cc_stats st;

	l2tp_cc_get_stats(t->cc, &st);
	l2tpd.stats.retransmits += st.retransmits;
	l2tp_cc_reset_counters(t->cc);
	log_info("control: tunnel %u%s%s%s counters reset", t->id, t->name ? " (" : "",
		 name_str(t->name), t->name ? ")" : "");
}

static void h_stats_reset(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	static const char *const known[] = { "tunnel_id", "tunnel", NULL };
	struct tunnel *t;

	if (!tunnel_request(c, id, args, known, &tunnel_filter, &t))
		return;
	if (t != NULL)
		stats_reset_tunnel(t);
	else
		stats_reset_global();
	conn_reply(c, id, CTL_OK, NULL, json_object_new_object());
}

static void h_reload(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	json_object *summary = NULL;
	char err[512];

	(void)args;
	if (l2tpd.reload(&summary, err, sizeof(err)) < 0)
		return conn_reply(c, id, CTL_E_CONFIG, err, NULL);
	conn_reply(c, id, CTL_OK, NULL, summary);
}

/*
 * Hands everything to a new process of our binary (handover.c).  The answer
 * goes before the exec: the CLI then waits for the new process to answer
 * `show daemon` with one restart more.
 */
static void h_failover_takeover(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	json_object *o = NULL;
	char err[4200];

	(void)args;
	if (failover_takeover(&o, err, sizeof(err)) < 0) {
		conn_reply(c, id, CTL_E_INVALID, err, NULL);
		return;
	}
	conn_reply(c, id, CTL_OK, NULL, o);
}

static void h_restart(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	json_object *o;
	char err[768];
	int rc;

	(void)args;
	o = handover_json();
	rc = handover_begin(HANDOVER_EXEC, err, sizeof(err));
	if (rc < 0) {
		json_object_put(o);
		return conn_reply(c, id, rc == HANDOVER_E_CONFIG ? CTL_E_CONFIG : CTL_E_SHUTTING_DOWN,
				  err, NULL);
	}
	conn_reply(c, id, CTL_OK, NULL, o);
}

_Static_assert(EV__COUNT <= 32, "monitor_events holds a bit per event kind");

/*
 * The kinds of event "events" asks for (every kind when absent): a
 * consumer of session changes alone need not be sent, nor parse, the rest.
 */
static bool arg_event_kinds(const struct usl_json_value *args, uint32_t *mask, struct argerr *e)
{
	const struct usl_json_value *list = arg(args, "events"), *el;

	*mask = UINT32_MAX;	/* every kind: ctl_on_event() passes named ones only */
	if (list == NULL)
		return true;
	if (list->type != USL_JSON_ARRAY || list->n == 0) {
		snprintf(e->msg, sizeof(e->msg), "'events' must be a non-empty list of event names");
		return false;
	}
	*mask = 0;
	for (el = usl_json_first(&req_doc, list); el != NULL; el = usl_json_next(&req_doc, el)) {
		const char *name = el->text != NULL ? el->text : "";
		int k = event_kind_by_name(name);

		if (k < 0) {
			snprintf(e->msg, sizeof(e->msg), "unknown event '%s' in 'events' (valid: %s)",
				 name, event_names_list());
			return false;
		}
		*mask |= 1u << k;
	}
	return true;
}

/* Monitors stay connected: a few slots are kept for short requests (reload). */
static unsigned monitors_max(void)
{
	unsigned n = l2tpd.conf->ctl_max_clients, reserve = n / 8 ? n / 8 : 1;

	return n > reserve ? n - reserve : 0;
}

static void h_monitor(struct ctl_conn *c, int64_t id, const struct usl_json_value *args)
{
	static const char *const known[] = { "events", NULL };
	json_object *o;
	struct argerr e;
	uint32_t mask;

	if (!arg_check_known(args, known, &e) || !arg_event_kinds(args, &mask, &e))
		return conn_reply(c, id, CTL_E_INVALID, e.msg, NULL);
	o = json_object_new_object();
	json_object_object_add(o, "monitoring", json_object_new_boolean(1));
	if (!c->monitor && n_monitors >= monitors_max()) {
		json_object_put(o);
		return conn_reply(c, id, CTL_E_LIMIT, "too many monitors: the last control slots "
				  "are kept for requests such as reload", NULL);
	}
	if (!c->monitor)
		n_monitors++;
	c->monitor = true;
	c->monitor_id = id;
	c->monitor_events = mask;
	conn_reply(c, id, CTL_OK, NULL, o);
}

static const struct {
	const char *cmd;
	ctl_handler fn;
} handlers[] = {
	{ "tunnel create", h_tunnel_create },
	{ "tunnel delete", h_tunnel_delete },
	{ "tunnel show", h_tunnel_show },
	{ "tunnel list", h_tunnel_list },
	{ "session create", h_session_create },
	{ "session delete", h_session_delete },
	{ "session show", h_session_show },
	{ "session list", h_session_list },
	{ "show daemon", h_show_daemon },
	{ "stats", h_stats },
	{ "stats reset", h_stats_reset },
	{ "metrics", h_metrics },
	{ "reload", h_reload },
	{ "restart", h_restart },
	{ "failover takeover", h_failover_takeover },
	{ "debug on", h_debug_on },
	{ "debug off", h_debug_off },
	{ "monitor", h_monitor },
};

/* ---- connections -------------------------------------------------------- */

/* "id" as json-c's get_int64 read it: a number (truncated), a numeric string, else 0. */
static int64_t request_id(const struct usl_json_value *v)
{
	if (v == NULL)
		return 0;
	switch (v->type) {
	case USL_JSON_INT:
		return v->i;
	case USL_JSON_NUMBER:
		return v->d >= 9.2e18 ? INT64_MAX : v->d <= -9.2e18 ? INT64_MIN : (int64_t)v->d;
	case USL_JSON_STRING: {
		char *end;
		long long n;

		errno = 0;
		n = strtoll(v->text, &end, 10);
		return errno == 0 && end != v->text && *end == '\0' ? n : 0;
	}
	case USL_JSON_BOOL:
		return v->b;
	default:
		return 0;
	}
}

static void conn_dispatch(struct ctl_conn *c, const char *line, size_t len)
{
	const struct usl_json_value *req, *v, *args, *quiet;
	char perr[128], err[200];
	int64_t id;

	l2tpd.stats.ctl_requests++;
	if (usl_json_parse(&req_doc, line, len, perr, sizeof(perr)) < 0) {
		snprintf(err, sizeof(err), "request is not a JSON object: %s", perr);
		return conn_reply(c, 0, CTL_E_INVALID, err, NULL);
	}
	req = usl_json_root(&req_doc);
	if (req->type != USL_JSON_OBJECT)
		return conn_reply(c, 0, CTL_E_INVALID, "request is not a JSON object", NULL);
	id = request_id(usl_json_get(&req_doc, req, "id"));
	if ((args = usl_json_get(&req_doc, req, "args")) != NULL && args->type == USL_JSON_NULL)
		args = NULL;
	v = usl_json_get(&req_doc, req, "cmd");
	if (v == NULL || v->type == USL_JSON_NULL)
		return conn_reply(c, id, CTL_E_INVALID, "missing 'cmd'", NULL);
	if (v->type != USL_JSON_STRING)
		return conn_reply(c, id, CTL_E_INVALID, "'cmd' must be a string", NULL);
	quiet = usl_json_get(&req_doc, req, "quiet");
	if (quiet != NULL && quiet->type != USL_JSON_BOOL)
		return conn_reply(c, id, CTL_E_INVALID, "'quiet' must be true or false", NULL);
	for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++) {
		if (strcmp(handlers[i].cmd, v->text) == 0 && strlen(v->text) == v->len) {
			c->req_quiet = quiet != NULL && quiet->b;
			handlers[i].fn(c, id, args);
			c->req_quiet = false;
			return;
		}
	}
	snprintf(err, sizeof(err), "unknown command '%.64s'", v->text);
	conn_reply(c, id, CTL_E_INVALID, err, NULL);
}

static void conn_free(struct ctl_conn *c)
{
	struct usl_list *pos, *tmp;

	/* parked requests stay on their objects, detached from the client */
	usl_list_foreach_safe(pos, tmp, &c->reqs) {
		struct ctl_req *r = usl_container_of(pos, struct ctl_req, conn_link);
		usl_list_del(&r->conn_link);
		r->conn = NULL;
	}
	usl_list_del(&c->link);
	usl_timer_cancel(&c->timer);
	evbuffer_remove_cb_entry(bufferevent_get_output(c->bev), c->out_cb);
	bufferevent_free(c->bev);
	if (c->monitor)
		n_monitors--;
	free(c);
	l2tpd.ctl.clients--;
}

/* Idle: connected, no request of its own waiting, nothing unread, not a monitor. */
static bool conn_idle(const struct ctl_conn *c)
{
	return !c->monitor && !c->closing && usl_list_empty(&c->reqs) && conn_pending(c) == 0 &&
	       evbuffer_get_length(bufferevent_get_input(c->bev)) == 0;
}

/* Tells an idle client why it goes (one non-blocking line) and frees it now. */
static void conn_evict(struct ctl_conn *c, const char *why)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "{\"id\":0,\"status\":\"limit\",\"error\":\"%s\"}\n",
			 why);

	l2tpd.ctl.evicted_idle++;
	if (n > 0 && (size_t)n < sizeof(line))
		(void)send(bufferevent_getfd(c->bev), line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	conn_free(c);
}

/* The client idle the longest, or NULL (at most ctl_max_clients to look at). */
static struct ctl_conn *conn_idlest(void)
{
	struct ctl_conn *best = NULL;
	struct usl_list *pos;

	usl_list_foreach(pos, &conns) {
		struct ctl_conn *c = usl_container_of(pos, struct ctl_conn, link);

		if (conn_idle(c) && (best == NULL || usl_time_cmp(c->active_at, best->active_at) < 0))
			best = c;
	}
	return best;
}

static void on_idle_timer(struct usl_timer *t)
{
	usl_time now = usl_timerset_now(l2tpd.timers);
	usl_time limit = usl_time_s(l2tpd.conf->ctl_idle_timeout);
	struct usl_list *pos, *tmp;

	usl_list_foreach_safe(pos, tmp, &conns) {
		struct ctl_conn *c = usl_container_of(pos, struct ctl_conn, link);

		if (conn_idle(c) && usl_time_cmp(usl_time_sub(now, c->active_at), limit) >= 0)
			conn_evict(c, "idle for ctl_idle_timeout: closed");
	}
	usl_timer_arm(l2tpd.timers, t, usl_time_ms(CTL_IDLE_SWEEP_MS));
}

/* Flushes what is queued, then closes (conn_write sees the output empty). */
static void conn_close_flushed(struct ctl_conn *c)
{
	c->closing = true;
	bufferevent_setwatermark(c->bev, EV_WRITE, 0, 0);
	bufferevent_disable(c->bev, EV_READ);
}

static void conn_read(struct bufferevent *bev, void *arg)
{
	struct ctl_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len;
	char *line;

	while (!c->closing && !c->paused &&
	       (line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF)) != NULL) {
		c->active_at = usl_timerset_now(l2tpd.timers);
		if (len > 0)
			conn_dispatch(c, line, len);
		usl_loop_mem_free(line);	/* libevent's memory */
		/* backpressure: the rest waits (in the socket too) until it reads */
		if (!c->closing && conn_pending(c) > CTL_OUTPUT_PAUSE) {
			c->paused = true;
			bufferevent_disable(bev, EV_READ);
		}
	}
	if (!c->closing && !c->paused && evbuffer_get_length(in) > CTL_MAX_LINE) {
		conn_reply(c, 0, CTL_E_INVALID, "request line too long", NULL);
		conn_close_flushed(c);
	}
	if (c->closing && !c->dropped && conn_pending(c) == 0)
		conn_free(c);
}

/* Called when the output has drained to the low watermark. */
static void conn_write(struct bufferevent *bev, void *arg)
{
	struct ctl_conn *c = arg;

	if (c->closing) {
		if (!c->dropped && conn_pending(c) == 0)
			conn_free(c);
		return;
	}
	if (c->paused) {
		c->paused = false;
		bufferevent_enable(bev, EV_READ);
		conn_read(bev, c);	/* the requests already read wait no longer */
	}
}

static void conn_event(struct bufferevent *bev, short what, void *arg)
{
	struct ctl_conn *c = arg;

	(void)bev;
	if ((what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) && !c->dropped)
		conn_free(c);
}

static void conn_count_drained(struct evbuffer *buf, const struct evbuffer_cb_info *info,
			       void *arg)
{
	struct ctl_conn *c = arg;

	(void)buf;
	c->drained += info->n_deleted;
}

/* A dropped client is freed; one over the cap goes if it read nothing since the arming. */
static void conn_timer(struct usl_timer *t)
{
	struct ctl_conn *c = usl_container_of(t, struct ctl_conn, timer);

	if (c->dropped) {
		conn_free(c);
		return;
	}
	if (conn_pending(c) <= l2tpd.conf->ctl_max_output)
		return;
	if (c->drained == c->drained_mark) {
		conn_drop(c, "");
		return;
	}
	c->drained_mark = c->drained;
	usl_timer_arm(l2tpd.timers, t, usl_time_ms(CTL_STALL_MS));
}

/*
 * Tells a client it cannot be served and closes it at once.  One
 * non-blocking send into a fresh socket's empty buffer: it fits, and if
 * not the client learns it from the close.
 */
static void ctl_refuse(int cfd, const char *err)
{
	json_object *o = reply_json(0, CTL_E_LIMIT, err, NULL);
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	char line[512];
	int n = snprintf(line, sizeof(line), "%s\n", s);

	if (n > 0 && (size_t)n < sizeof(line) && send(cfd, line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		log_debug("control: refusing a client: send: %s", strerror(errno));
	json_object_put(o);
	close(cfd);
}

static void ctl_accept(int fd, short what, void *arg)
{
	struct ctl_conn *c;
	char err[128];
	int cfd;

	(void)fd;
	(void)what;
	(void)arg;
	/* out of descriptors: tunnels in the StopCCN hold give theirs up first */
	cfd = acceptor_accept(&ctl_acceptor);
	if (cfd < 0)
		return;
	/* full: the client idle the longest makes room (idle ones cannot lock others out) */
	if (l2tpd.ctl.clients >= l2tpd.conf->ctl_max_clients && (c = conn_idlest()) != NULL)
		conn_evict(c, "idle while ctl_max_clients was reached: closed for a new client");
	if (l2tpd.ctl.clients >= l2tpd.conf->ctl_max_clients) {
		l2tpd.ctl.refused++;
		log_warnx_rl(&accept_rl, usl_timerset_now(l2tpd.timers),
			     "control: %u clients connected (ctl_max_clients): refusing another",
			     l2tpd.ctl.clients);
		snprintf(err, sizeof(err), "too many control clients (ctl_max_clients %u)",
			 l2tpd.conf->ctl_max_clients);
		ctl_refuse(cfd, err);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL || (c->bev = bufferevent_socket_new(usl_loop_base(l2tpd.loop), cfd,
							    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		free(c);
		close(cfd);
		return;
	}
	c->out_cb = evbuffer_add_cb(bufferevent_get_output(c->bev), conn_count_drained, c);
	if (c->out_cb == NULL) {
		bufferevent_free(c->bev);
		free(c);
		return;
	}
	l2tpd.ctl.clients++;
	c->active_at = usl_timerset_now(l2tpd.timers);
	usl_list_init(&c->reqs);
	usl_list_add_tail(&conns, &c->link);
	usl_timer_init(&c->timer, conn_timer);
	bufferevent_setcb(c->bev, conn_read, conn_write, conn_event, c);
	bufferevent_setwatermark(c->bev, EV_WRITE, CTL_OUTPUT_RESUME, 0);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

/*
 * A socket file that nobody answers on is stale (a crashed daemon): remove
 * it.  Anything else at that path is not ours to delete.
 */
static int ctl_claim_path(const struct sockaddr_un *sun, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	if (lstat(sun->sun_path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "ctl_socket %s exists and is not a socket: not removing it",
			 sun->sun_path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) == 0) {
		close(fd);
		snprintf(err, errlen, "control socket %s is in use: is another l2tpv3d running?",
			 sun->sun_path);
		return -1;
	}
	if (fd >= 0)
		close(fd);
	unlink(sun->sun_path);
	return 0;
}

static void mkdir_parent(const char *path)
{
	char dir[sizeof(ctl_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash != NULL && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0755);
	}
}

int ctl_init(const struct l2tpd_config *c, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	mode_t old;

	if (strlen(c->ctl_socket) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "ctl_socket path too long: %s", c->ctl_socket);
		return -1;
	}
	memcpy(sun.sun_path, c->ctl_socket, strlen(c->ctl_socket) + 1);
	mkdir_parent(sun.sun_path);
	if (ctl_claim_path(&sun, err, errlen) < 0)
		return -1;
	ctl_acceptor.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	old = umask(0117);
	if (ctl_acceptor.fd < 0 ||
	    bind(ctl_acceptor.fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    listen(ctl_acceptor.fd, 128) < 0) {
		umask(old);
		snprintf(err, errlen, "control socket %s: %s", sun.sun_path, strerror(errno));
		return -1;
	}
	umask(old);
	usl_timer_init(&idle_timer, on_idle_timer);
	usl_timer_arm(l2tpd.timers, &idle_timer, usl_time_ms(CTL_IDLE_SWEEP_MS));
	snprintf(ctl_path, sizeof(ctl_path), "%s", sun.sun_path);
	chmod(ctl_path, 0660);
	if (c->ctl_group[0]) {
		struct group *g = getgrnam(c->ctl_group);
		if (g == NULL || chown(ctl_path, (uid_t)-1, g->gr_gid) < 0) {
			snprintf(err, errlen, "ctl_group '%s': %s", c->ctl_group,
				 g == NULL ? "no such group" : strerror(errno));
			return -1;
		}
	}
	if (acceptor_start(&ctl_acceptor, ctl_accept, NULL) < 0 ||
	    event_subscribe(ctl_on_event, NULL) < 0)
		return -1;
	return 0;
}

/*
 * Writes out's bytes to fd at once, as far as the client takes them.  The
 * buffer itself is left alone: the bufferevent owns its draining (libevent
 * freezes its start), and the process is about to go.
 */
static void conn_write_now(int fd, struct evbuffer *out)
{
	size_t len = evbuffer_get_length(out), done = 0;
	const unsigned char *p = len ? evbuffer_pullup(out, -1) : NULL;
	ssize_t k;

	while (p != NULL && done < len) {
		k = send(fd, p + done, len - done, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k <= 0)
			return;
		done += (size_t)k;
	}
}

/*
 * A restart: every monitor hears it (then its connection closes with the
 * process; `monitor --reconnect` finds the next one), and what is written
 * for any client goes now, as far as the client reads.
 */
static void ctl_restarting(void)
{
	struct usl_list *pos;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	usl_list_foreach(pos, &conns) {
		struct ctl_conn *c = usl_container_of(pos, struct ctl_conn, link);
		struct evbuffer *out = bufferevent_get_output(c->bev);
		json_object *o, *ev;

		if (c->dropped)
			continue;
		if (c->monitor && !c->closing) {
			ev = json_object_new_object();
			json_add_str(ev, "event", "daemon-restarting");
			json_object_object_add(ev, "time",
					       json_object_new_double(ts.tv_sec + ts.tv_nsec / 1e9));
			o = json_object_new_object();
			json_add_int(o, "id", c->monitor_id);
			json_object_object_add(o, "event", ev);
			conn_write_json(c, o);
			json_object_put(o);
		}
		conn_write_now(bufferevent_getfd(c->bev), out);
	}
}

void ctl_shutdown(void)
{
	event_unsubscribe(ctl_on_event, NULL);
	while (!usl_list_empty(&conns))
		conn_free(usl_container_of(conns.next, struct ctl_conn, link));
	usl_timer_cancel(&idle_timer);
	if (ctl_acceptor.fd >= 0)
		unlink(ctl_path);
	acceptor_stop(&ctl_acceptor);
	usl_json_free(&req_doc);
}
