/*
 * src/inspect/avp.c - lists a control message's AVPs for the output.
 *
 * The codec's AVP walker gives each AVP as it stands on the wire (so the
 * listing keeps wire order and shows what the decoder skipped); values come
 * from the decoded struct l2tp_msg, never from the raw bytes, so hidden
 * AVPs show their plaintext when --secret was given and the listing cannot
 * disagree with what the daemon would act on.
 */
#include <stdio.h>
#include <string.h>

#include "proto/auth.h"
#include "inspect.h"

#define TXT_MAX		4200	/* a 1017-octet string, escaped */
#define JSON_MAX	6400

typedef void (*fmt_fn)(const struct l2tp_msg *m, char *t, char *j);

struct avp_fmt {
	const char *key;
	fmt_fn fmt;
};

/* Walk state: the record being filled and what the walk learnt. */
struct walk {
	struct insp_rec *r;
	const struct l2tp_msg *m;
	enum l2tp_drop rc;
	struct insp_avp_info *info;
	uint64_t json_seen[2];	/* one JSON key per AVP type, even when repeated */
	unsigned index;
	unsigned n_digest;	/* Message Digest AVPs met so far: m->digest[] index */
	unsigned n_fss;		/* Failover Session State AVPs met so far: m->fss[] index */
};

static void put_str(const struct l2tp_bytes *b, char *t, char *j)
{
	char tt[TXT_MAX - 2], jt[JSON_MAX - 2];

	insp_text_str(tt, sizeof(tt), b->p, b->len);
	snprintf(t, TXT_MAX, "\"%s\"", tt);
	insp_json_str(jt, sizeof(jt), b->p, b->len);
	snprintf(j, JSON_MAX, "\"%s\"", jt);
}

static void put_hex(const uint8_t *p, size_t n, char *t, char *j)
{
	char hex[2 * L2TP_AVP_MAX_LEN + 1];

	insp_hex(hex, sizeof(hex), p, n);
	snprintf(t, TXT_MAX, "%s", n ? hex : "(empty)");
	snprintf(j, JSON_MAX, "\"%s\"", hex);
}

static void put_u(uint64_t v, char *t, char *j)
{
	snprintf(t, TXT_MAX, "%llu", (unsigned long long)v);
	snprintf(j, JSON_MAX, "%llu", (unsigned long long)v);
}

static const char *result_name(const struct l2tp_msg *m)
{
	if (m->type == L2TP_MSG_STOPCCN)
		return l2tp_stopccn_result_name(m->result.result);
	if (m->type == L2TP_MSG_CDN)
		return l2tp_cdn_result_name(m->result.result);
	return "?";
}

static void f_result(const struct l2tp_msg *m, char *t, char *j)
{
	const struct l2tp_result *r = &m->result;
	char tm[TXT_MAX], jm[TXT_MAX];
	int n, k;

	insp_text_str(tm, sizeof(tm), r->message.p, r->message.len);
	insp_json_str(jm, sizeof(jm), r->message.p, r->message.len);
	n = snprintf(t, TXT_MAX, "%u (%s)", r->result, result_name(m));
	k = snprintf(j, JSON_MAX, "{\"code\":%u,\"name\":\"%s\"", r->result, result_name(m));
	if (r->has_error) {
		n += snprintf(t + n, TXT_MAX - (size_t)n, " error %u (%s)", r->error,
			      l2tp_error_code_name(r->error));
		k += snprintf(j + k, JSON_MAX - (size_t)k, ",\"error\":%u,\"error_name\":\"%s\"",
			      r->error, l2tp_error_code_name(r->error));
	}
	if (r->message.len) {
		snprintf(t + n, TXT_MAX - (size_t)n, " \"%s\"", tm);
		k += snprintf(j + k, JSON_MAX - (size_t)k, ",\"message\":\"%s\"", jm);
	}
	snprintf(j + k, JSON_MAX - (size_t)k, "}");
}

static void f_tie_breaker(const struct l2tp_msg *m, char *t, char *j)
{
	snprintf(t, TXT_MAX, "%016llx", (unsigned long long)m->tie_breaker);
	snprintf(j, JSON_MAX, "\"%016llx\"", (unsigned long long)m->tie_breaker);
}

static void f_firmware(const struct l2tp_msg *m, char *t, char *j)
{
	snprintf(t, TXT_MAX, "0x%04x", m->firmware_rev);
	snprintf(j, JSON_MAX, "%u", m->firmware_rev);
}

static void f_host_name(const struct l2tp_msg *m, char *t, char *j) { put_str(&m->host_name, t, j); }
static void f_vendor_name(const struct l2tp_msg *m, char *t, char *j) { put_str(&m->vendor_name, t, j); }
static void f_language(const struct l2tp_msg *m, char *t, char *j) { put_str(&m->preferred_language, t, j); }
static void f_end_id(const struct l2tp_msg *m, char *t, char *j) { put_str(&m->remote_end_id, t, j); }
static void f_window(const struct l2tp_msg *m, char *t, char *j) { put_u(m->recv_window, t, j); }
static void f_serial(const struct l2tp_msg *m, char *t, char *j) { put_u(m->serial, t, j); }
static void f_tx_speed(const struct l2tp_msg *m, char *t, char *j) { put_u(m->tx_speed, t, j); }
static void f_rx_speed(const struct l2tp_msg *m, char *t, char *j) { put_u(m->rx_speed, t, j); }
static void f_channel(const struct l2tp_msg *m, char *t, char *j) { put_u(m->phys_channel_id, t, j); }
static void f_local_sid(const struct l2tp_msg *m, char *t, char *j) { put_u(m->local_sid, t, j); }
static void f_remote_sid(const struct l2tp_msg *m, char *t, char *j) { put_u(m->remote_sid, t, j); }
static void f_rv(const struct l2tp_msg *m, char *t, char *j)
{
	put_hex(m->random_vector.p, m->random_vector.len, t, j);
}
static void f_nonce(const struct l2tp_msg *m, char *t, char *j)
{
	put_hex(m->nonce.p, m->nonce.len, t, j);
}
static void f_cookie(const struct l2tp_msg *m, char *t, char *j)
{
	put_hex(m->cookie, m->cookie_len, t, j);
}

static void f_circuit_errors(const struct l2tp_msg *m, char *t, char *j)
{
	snprintf(t, TXT_MAX, "crc %u framing %u hw-overruns %u buffer-overruns %u timeout %u "
		 "alignment %u", m->crc_errors, m->framing_errors, m->hw_overruns,
		 m->buffer_overruns, m->timeout_errors, m->alignment_errors);
	snprintf(j, JSON_MAX, "{\"crc\":%u,\"framing\":%u,\"hw_overruns\":%u,"
		 "\"buffer_overruns\":%u,\"timeout\":%u,\"alignment\":%u}", m->crc_errors,
		 m->framing_errors, m->hw_overruns, m->buffer_overruns, m->timeout_errors,
		 m->alignment_errors);
}

static const char *digest_name(uint8_t type)
{
	return type == L2TP_DIGEST_HMAC_MD5 ? "hmac-md5" :
	       type == L2TP_DIGEST_HMAC_SHA1 ? "hmac-sha1" : "unknown";
}

/* The n-th Message Digest AVP is m->digest[n]: the walk counts them. */
static void put_digest(struct walk *w, char *t, char *j)
{
	const struct l2tp_msg *m = w->m;
	uint8_t type = w->n_digest < m->n_digests ? m->digest[w->n_digest].type : 0xff;

	w->n_digest++;
	snprintf(t, TXT_MAX, "%s", digest_name(type));
	snprintf(j, JSON_MAX, "\"%s\"", digest_name(type));
}

/* Router ID: four octets that RFC 3931 says not to take for an address, shown dotted. */
static void f_router_id(const struct l2tp_msg *m, char *t, char *j)
{
	uint32_t v = m->router_id;

	snprintf(t, TXT_MAX, "%u.%u.%u.%u", v >> 24, (v >> 16) & 255, (v >> 8) & 255, v & 255);
	snprintf(j, JSON_MAX, "\"%s\"", t);
}

static void f_ccid(const struct l2tp_msg *m, char *t, char *j)
{
	snprintf(t, TXT_MAX, "0x%08x", m->assigned_ccid);
	snprintf(j, JSON_MAX, "%u", m->assigned_ccid);
}

static void f_pw_caps(const struct l2tp_msg *m, char *t, char *j)
{
	int n = snprintf(t, TXT_MAX, "["), k = snprintf(j, JSON_MAX, "[");
	unsigned i;

	for (i = 0; i < m->n_pw_caps; i++) {
		n += snprintf(t + n, TXT_MAX - (size_t)n, "%s%u (%s)", i ? ", " : "",
			      m->pw_caps[i], l2tp_pw_type_name(m->pw_caps[i]));
		k += snprintf(j + k, JSON_MAX - (size_t)k, "%s%u", i ? "," : "", m->pw_caps[i]);
	}
	snprintf(t + n, TXT_MAX - (size_t)n, "]");
	snprintf(j + k, JSON_MAX - (size_t)k, "]");
}

static void f_pw_type(const struct l2tp_msg *m, char *t, char *j)
{
	snprintf(t, TXT_MAX, "%u (%s)", m->pw_type, l2tp_pw_type_name(m->pw_type));
	snprintf(j, JSON_MAX, "{\"value\":%u,\"name\":\"%s\"}", m->pw_type,
		 l2tp_pw_type_name(m->pw_type));
}

static void f_l2ss(const struct l2tp_msg *m, char *t, char *j)
{
	const char *n = m->l2ss == 0 ? "none" : m->l2ss == 1 ? "default" : "unknown";

	snprintf(t, TXT_MAX, "%u (%s)", m->l2ss, n);
	snprintf(j, JSON_MAX, "%u", m->l2ss);
}

static void f_data_seq(const struct l2tp_msg *m, char *t, char *j)
{
	static const char *const names[] = { "none", "non-IP", "all" };

	snprintf(t, TXT_MAX, "%u (%s)", m->data_seq, m->data_seq < 3 ? names[m->data_seq] : "unknown");
	snprintf(j, JSON_MAX, "%u", m->data_seq);
}

/* Circuit Status (5.4.5): A = active, N = new (versus an update of an existing circuit). */
static void f_circuit_status(const struct l2tp_msg *m, char *t, char *j)
{
	bool a = m->circuit_status & L2TP_CIRCUIT_ACTIVE, n = m->circuit_status & L2TP_CIRCUIT_NEW;

	snprintf(t, TXT_MAX, "0x%04x (%s, %s)", m->circuit_status, a ? "active" : "inactive",
		 n ? "new" : "existing");
	snprintf(j, JSON_MAX, "{\"value\":%u,\"active\":%s,\"new\":%s}", m->circuit_status,
		 a ? "true" : "false", n ? "true" : "false");
}

/* RFC 4951 */
static void f_failover_cap(const struct l2tp_msg *m, char *t, char *j)
{
	bool c = m->failover_flags & L2TP_FAILOVER_C, d = m->failover_flags & L2TP_FAILOVER_D;

	snprintf(t, TXT_MAX, "%s%s%s, recovery time %u ms", c ? "control" : "",
		 c && d ? " and " : "", d ? "data" : (c ? "" : "none"), m->recovery_time_ms);
	snprintf(j, JSON_MAX, "{\"control\":%s,\"data\":%s,\"recovery_time_ms\":%u}",
		 c ? "true" : "false", d ? "true" : "false", m->recovery_time_ms);
}

static void f_tunnel_recovery(const struct l2tp_msg *m, char *t, char *j)
{
	snprintf(t, TXT_MAX, "sender's 0x%08x, recipient's 0x%08x", m->recover_ccid,
		 m->recover_peer_ccid);
	snprintf(j, JSON_MAX, "{\"ccid\":%u,\"peer_ccid\":%u}", m->recover_ccid,
		 m->recover_peer_ccid);
}

static void f_scs(const struct l2tp_msg *m, char *t, char *j)
{
	snprintf(t, TXT_MAX, "Ns %u, Nr %u", m->suggested_ns, m->suggested_nr);
	snprintf(j, JSON_MAX, "{\"ns\":%u,\"nr\":%u}", m->suggested_ns, m->suggested_nr);
}

/* One Failover Session State of the m->fss[] the walk has reached. */
static void put_fss(struct walk *w, char *t, char *j)
{
	const struct l2tp_fss *f = &w->m->fss[w->n_fss < w->m->n_fss ? w->n_fss : 0];

	w->n_fss++;
	snprintf(t, TXT_MAX, "session %u, remote %u%s", f->sid, f->remote_sid,
		 f->sid == 0 ? " (unknown to the sender)" : "");
	snprintf(j, JSON_MAX, "{\"sid\":%u,\"remote_sid\":%u}", f->sid, f->remote_sid);
}

static const struct avp_fmt fmts[L2TP_AVP_MAX_KNOWN + 1] = {
	[L2TP_AVP_RESULT_CODE]		= { "result", f_result },
	[L2TP_AVP_TIE_BREAKER]		= { "tie-breaker", f_tie_breaker },
	[L2TP_AVP_FIRMWARE_REVISION]	= { "firmware", f_firmware },
	[L2TP_AVP_HOST_NAME]		= { "host-name", f_host_name },
	[L2TP_AVP_VENDOR_NAME]		= { "vendor-name", f_vendor_name },
	[L2TP_AVP_RECV_WINDOW_SIZE]	= { "recv-window", f_window },
	[L2TP_AVP_SERIAL_NUMBER]	= { "serial", f_serial },
	[L2TP_AVP_TX_CONNECT_SPEED]	= { "tx-speed", f_tx_speed },
	[L2TP_AVP_PHYSICAL_CHANNEL_ID]	= { "phys-channel", f_channel },
	[L2TP_AVP_CIRCUIT_ERRORS]	= { "circuit-errors", f_circuit_errors },
	[L2TP_AVP_RANDOM_VECTOR]	= { "random-vector", f_rv },
	[L2TP_AVP_RX_CONNECT_SPEED]	= { "rx-speed", f_rx_speed },
	[L2TP_AVP_MESSAGE_DIGEST]	= { "digest", NULL },	/* put_digest() */
	[L2TP_AVP_ROUTER_ID]		= { "router-id", f_router_id },
	[L2TP_AVP_ASSIGNED_CCID]	= { "assigned-ccid", f_ccid },
	[L2TP_AVP_PW_CAP_LIST]		= { "pw-caps", f_pw_caps },
	[L2TP_AVP_LOCAL_SESSION_ID]	= { "local-sid", f_local_sid },
	[L2TP_AVP_REMOTE_SESSION_ID]	= { "remote-sid", f_remote_sid },
	[L2TP_AVP_ASSIGNED_COOKIE]	= { "cookie", f_cookie },
	[L2TP_AVP_REMOTE_END_ID]	= { "remote-end-id", f_end_id },
	[L2TP_AVP_PW_TYPE]		= { "pw-type", f_pw_type },
	[L2TP_AVP_L2_SPECIFIC_SUBLAYER]	= { "l2-sublayer", f_l2ss },
	[L2TP_AVP_DATA_SEQUENCING]	= { "data-sequencing", f_data_seq },
	[L2TP_AVP_CIRCUIT_STATUS]	= { "circuit-status", f_circuit_status },
	[L2TP_AVP_PREFERRED_LANGUAGE]	= { "language", f_language },
	[L2TP_AVP_CTRL_MSG_AUTH_NONCE]	= { "nonce", f_nonce },
	[L2TP_AVP_TX_CONNECT_SPEED_BPS]	= { "tx-speed", f_tx_speed },
	[L2TP_AVP_RX_CONNECT_SPEED_BPS]	= { "rx-speed", f_rx_speed },
	[L2TP_AVP_FAILOVER_CAP]		= { "failover", f_failover_cap },
	[L2TP_AVP_TUNNEL_RECOVERY]	= { "tunnel-recovery", f_tunnel_recovery },
	[L2TP_AVP_SUGGESTED_CTRL_SEQ]	= { "suggested-seq", f_scs },
	[L2TP_AVP_FAILOVER_SESSION]	= { "session-state", NULL },	/* put_fss() */
};

static bool json_once(struct walk *w, uint16_t type)
{
	uint64_t bit = (uint64_t)1 << (type & 63);
	uint64_t *set = &w->json_seen[type >= 64];

	if (*set & bit)
		return false;
	*set |= bit;
	return true;
}

/* What the codec does with an AVP it does not store: ignore it, or flag it (M=1). */
static void unknown_avp(struct walk *w, const struct l2tp_avp_view *a)
{
	char what[64];
	size_t n;

	if (a->vendor == L2TP_VENDOR_IETF && a->type == L2TP_AVP_EXTENDED_VENDOR_ID)
		snprintf(what, sizeof(what), "extended vendor AVP (type 58)");
	else if (a->vendor != L2TP_VENDOR_IETF)
		snprintf(what, sizeof(what), "vendor %u type %u", a->vendor, a->type);
	else
		snprintf(what, sizeof(what), "type %u", a->type);
	/* 4.7.3: in a v2 SCCRQ every unrecognised AVP is ignored, M or not */
	if (!(a->flags & L2TP_AVP_F_M) || w->m->ver == 2 ||
	    l2tp_avp_vendor_ignored(a->vendor, a->type)) {
		insp_rec_list(w->r, INSP_LIST_SKIPPED, what);
		return;
	}
	insp_rec_list(w->r, INSP_LIST_UNKNOWN_M, what);
	n = strlen(w->info->unknown_m);
	snprintf(w->info->unknown_m + n, sizeof(w->info->unknown_m) - n, "%s%s",
		 n ? ", " : "", what);
}

/* A recognised AVP: its value as the codec decoded it. */
static void known_avp(struct walk *w, const struct l2tp_avp_view *a, const struct avp_fmt *f)
{
	static char t[TXT_MAX + 32], j[JSON_MAX];
	bool hidden = a->flags & L2TP_AVP_F_H;
	bool digest = a->type == L2TP_AVP_MESSAGE_DIGEST;
	bool have = digest ? w->n_digest < w->m->n_digests : l2tp_msg_has(w->m, a->type);
	size_t n;

	if (hidden)
		w->info->hidden = true;
	if (!have && w->rc != L2TP_DROP_NONE && w->info->at[0] == '\0')
		snprintf(w->info->at, sizeof(w->info->at), "%s", f->key);
	if (!have) {
		/* decoded fine but not stored: a malformed M=0 AVP the codec ignored (7.1) */
		snprintf(t, sizeof(t), "(%s%s)", hidden ? "hidden, " : "",
			 w->rc == L2TP_DROP_NONE ? "malformed, ignored" : "not decoded");
		insp_rec_avp(w->r, f->key, t, json_once(w, a->type) ? "null" : NULL);
		return;
	}
	if (w->rc == L2TP_DROP_DUPLICATE_AVP && !json_once(w, a->type)) {
		/* the value in m is the first copy's: this one may differ */
		insp_rec_avp(w->r, f->key, "(repeated)", NULL);
		return;
	}
	if (digest)
		put_digest(w, t, j);
	else if (a->type == L2TP_AVP_FAILOVER_SESSION)
		put_fss(w, t, j);
	else
		f->fmt(w->m, t, j);
	if (hidden) {
		n = strlen(t);
		snprintf(t + n, sizeof(t) - n, " (hidden)");
	}
	insp_rec_avp(w->r, f->key, t, json_once(w, a->type) || w->rc == L2TP_DROP_DUPLICATE_AVP ?
		     j : NULL);
}

static void walk_one(const struct l2tp_avp_view *a, void *arg)
{
	struct walk *w = arg;
	const struct l2tp_avp_rule *rule;
	unsigned index = w->index++;
	char what[64];

	/* the first AVP is the message type, already in the header fields */
	if (index == 0 && a->vendor == L2TP_VENDOR_IETF && a->type == L2TP_AVP_MESSAGE_TYPE)
		return;
	if (a->vendor != L2TP_VENDOR_IETF || a->type == L2TP_AVP_EXTENDED_VENDOR_ID)
		return unknown_avp(w, a);
	rule = l2tp_avp_rule(a->type);
	if (rule == NULL)
		return unknown_avp(w, a);
	if (rule->flags & L2TP_AVPR_IGNORE) {
		/* an RFC 2661 AVP L2TPv3 has no use for: recognised, ignored even with M=1 */
		snprintf(what, sizeof(what), "%s", rule->name);
		insp_rec_list(w->r, INSP_LIST_V2COMPAT, what);
		return;
	}
	if (a->type <= L2TP_AVP_MAX_KNOWN && fmts[a->type].key != NULL)
		return known_avp(w, a, &fmts[a->type]);
	snprintf(what, sizeof(what), "%s", rule->name);
	insp_rec_avp(w->r, "avp", what, NULL);
}

void insp_avp_render(struct insp_rec *r, const struct insp_pkt *pk, const struct l2tp_msg *m,
		     enum l2tp_drop rc, struct insp_avp_info *info)
{
	struct walk w = { .r = r, .m = m, .rc = rc, .info = info };

	memset(info, 0, sizeof(*info));
	info->n_avps = l2tp_msg_walk_avps(pk->l2tp, pk->len, pk->over_ip, walk_one, &w);
}

/* Names of the required AVPs m lacks, for a missing-avp violation. */
void insp_avp_missing(const struct l2tp_msg *m, char *buf, size_t len)
{
	uint64_t lo, hi;
	size_t n = 0;
	unsigned t;

	buf[0] = '\0';
	l2tp_msg_missing_avps(m, &lo, &hi);
	for (t = 0; t < 128 && n < len; t++) {
		if (!((t < 64 ? lo : hi) & ((uint64_t)1 << (t & 63))))
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
				      l2tp_avp_name((uint16_t)t) ? l2tp_avp_name((uint16_t)t) : "?");
	}
}
