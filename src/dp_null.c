/*
 * src/dp_null.c - the null data plane: programs nothing, records what it
 * would have programmed, and completes every request at once.
 *
 * It lets the whole control plane run (and be tested and benchmarked) on
 * kernels without L2TP.  `show` reports the recorded attributes so tests
 * can assert what the kernel data plane would have been asked for.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "l2tpv3d.h"

static unsigned null_ifindex;

static int null_init(char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	null_ifindex = 0;
	return 0;
}

static void null_shutdown(void)
{
}

static int null_tunnel_create(struct tunnel *t)
{
	tunnel_dp_done(t, 0);
	return 0;
}

static void null_tunnel_delete(struct tunnel *t)
{
	(void)t;
}

/* Names the interface as the kernel would: the profile's pattern with %d. */
static int null_session_create(struct session *s)
{
	const char *pat = s->prof->ifname[0] ? s->prof->ifname : "l2tpeth%d";

	s->dp_handle = ++null_ifindex;
	if (ifname_expand(pat, null_ifindex - 1, s->ifname, sizeof(s->ifname)) < 0)
		return -ENAMETOOLONG;
	session_dp_done(s, 0);
	return 0;
}

static void null_session_delete(struct session *s)
{
	s->dp_handle = 0;
}

/*
 * Nothing is carried, so every counter is 0: from the create to the
 * delete, as the kernel's would be known; the cache is always fresh.
 * A session not (or no longer) in the data plane has none, as there.
 */
static int null_session_stats(const struct session *s, struct dp_session_stats *st)
{
	if (s->dp_handle == 0) {
		errno = ENOENT;
		return -1;
	}
	memset(st, 0, sizeof(*st));
	return 0;
}

static int64_t null_stats_refresh_all(int64_t interval_ms)
{
	(void)interval_ms;
	return 0;
}

static json_object *cookie_hex(const uint8_t *c, uint8_t len)
{
	char hex[17] = "";

	for (uint8_t i = 0; i < len && i < 8; i++)
		snprintf(hex + 2 * i, 3, "%02x", c[i]);
	return json_object_new_string(hex);
}

/*
 * The attributes a kernel SESSION_CREATE/TUNNEL_CREATE would carry: nothing
 * is programmed, and the reply says so (programmed: false, would_program).
 */
static json_object *null_describe(const struct tunnel *t, const struct session *s)
{
	json_object *o = json_object_new_object();
	const uint8_t *c;
	uint8_t len;

	json_object_object_add(o, "type", json_object_new_string("null"));
	json_object_object_add(o, "programmed", json_object_new_boolean(0));
	json_object_object_add(o, "would_program", json_object_new_boolean(1));
	if (s == NULL || s->sess == NULL) {
		json_object_object_add(o, "conn_id", json_object_new_int64(t->id));
		json_object_object_add(o, "peer_conn_id",
				       json_object_new_int64(l2tp_cc_peer_ccid(t->cc)));
		return o;
	}
	json_object_object_add(o, "ifname", json_object_new_string(s->ifname));
	c = l2tp_sess_cookie(s->sess, &len);
	json_object_object_add(o, "cookie", cookie_hex(c, len));
	c = l2tp_sess_peer_cookie(s->sess, &len);
	json_object_object_add(o, "peer_cookie", cookie_hex(c, len));
	json_object_object_add(o, "l2spec_type",
			       json_object_new_int(l2tp_sess_peer_l2ss(s->sess)));
	json_object_object_add(o, "recv_seq",
			       json_object_new_boolean(l2tp_sess_data_seq(s->sess) != 0));
	json_object_object_add(o, "send_seq",
			       json_object_new_boolean(l2tp_sess_peer_data_seq(s->sess) != 0));
	return o;
}

/* A handed-over session keeps its name: new ones are numbered after it. */
static int null_session_adopt(struct session *s, struct usl_unpack *r)
{
	(void)r;
	if (s->dp_handle > null_ifindex && s->dp_handle <= UINT32_MAX)
		null_ifindex = (unsigned)s->dp_handle;
	return 0;
}

const struct dp_ops dp_null_ops = {
	.name = "null",
	.init = null_init,
	.shutdown = null_shutdown,
	.tunnel_create = null_tunnel_create,
	.tunnel_delete = null_tunnel_delete,
	.session_create = null_session_create,
	.session_delete = null_session_delete,
	.session_stats = null_session_stats,
	.stats_refresh_all = null_stats_refresh_all,
	.session_stats_cached = null_session_stats,
	.describe = null_describe,
	.session_adopt = null_session_adopt,
};
