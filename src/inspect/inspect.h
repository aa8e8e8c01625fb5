/*
 * src/inspect/inspect.h - l2tpv3-inspect: decode and lint L2TPv3 control
 * traffic from pcap/pcapng captures.
 *
 * The L2TP part is the daemon's own codec (src/proto): this tool decodes
 * only the link, IP and UDP headers around it.  Data flows one way:
 *
 *   main.c  pcap records -> pkt.c (frame to struct insp_pkt)
 *           -> conn.c (connection tracking, sequence and state checks)
 *           -> out.c (one record per message, printed in capture order)
 *
 * avp.c lists and formats a decoded message's AVPs for out.c.
 */
#ifndef L2TP_INSPECT_H
#define L2TP_INSPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/msg.h"

#define INSP_ADDR_STRLEN	64	/* "[ffff:...:ffff]:65535" */
#define INSP_DEFAULT_PORT	1701

/* One transport endpoint.  port is 0 over IP (protocol 115). */
struct insp_addr {
	uint8_t family;		/* AF_INET or AF_INET6 */
	uint8_t a[16];
	uint16_t port;
};

enum insp_pkt_kind {
	PKT_OTHER,		/* not L2TPv3: ignored */
	PKT_CONTROL,		/* a control message at l2tp/len */
	PKT_DATA,		/* a data message: counted, its cookie checked */
	PKT_UNDECODED,		/* L2TP, or may be, but not decodable: why */
};

/* What pkt.c found in one captured frame. */
struct insp_pkt {
	enum insp_pkt_kind kind;
	unsigned frame;			/* 1-based, as tshark numbers them */
	int64_t t_ns;			/* since the first frame */
	struct insp_addr src, dst;
	bool over_ip;			/* the zero Session ID precedes the header */
	bool udp_csum_zero;		/* 4.1.2.3: MUST be on for control */
	const uint8_t *l2tp;		/* from the Session ID (IP) or the UDP payload */
	size_t len;
	const char *why;		/* PKT_UNDECODED */
};

struct insp_opts {
	bool json;
	uint16_t udp_port;
	bool have_secret;
	struct l2tp_secret secret;
};

/* Violation kinds that are not a codec drop reason (those use l2tp_drop_name()). */
#define V_NS_GAP		"ns-gap"
#define V_NS_REUSED		"ns-reused"
#define V_NR_INVALID		"nr-invalid"
#define V_NR_BACKWARDS		"nr-backwards"
#define V_UNACKED_RTX		"unacked-retransmission"
#define V_NO_BACKOFF		"no-backoff"
#define V_WRONG_STATE		"wrong-state"
#define V_ZERO_CCID		"zero-ccid"
#define V_PW_TYPE		"pw-type-not-advertised"
#define V_UDP_CSUM		"udp-checksum-off"
#define V_MSG_TYPE_M		"message-type-m-bit"
#define V_DIGEST_MISSING	"digest-missing"
#define V_DIGEST_MISMATCH	"digest-mismatch"
#define V_COOKIE_MISMATCH	"cookie-mismatch"
#define V_ZERO_CCID_ACK		"zero-ccid-ack"

/*
 * One output line (or JSON object): a control message, or a frame that
 * looked like L2TP but could not be decoded.  Records are printed in
 * capture order; a record is held back while a later frame may still add
 * a violation to it (a retransmission waiting for its acknowledgement).
 */
struct insp_rec;

/* pkt.c */
bool insp_pkt_linktype_ok(int dlt);
void insp_pkt_parse(int dlt, const uint8_t *p, size_t caplen, const struct insp_opts *o,
		    struct insp_pkt *pk);
void insp_pkt_learn(const struct insp_pkt *pk);
void insp_pkt_shutdown(void);
void insp_addr_str(const struct insp_addr *a, bool with_port, char *buf, size_t len);
bool insp_addr_same_host(const struct insp_addr *x, const struct insp_addr *y);

/* conn.c */
void insp_conn_init(const struct insp_opts *o);
void insp_conn_message(const struct insp_pkt *pk);
void insp_conn_data(const struct insp_pkt *pk);
void insp_conn_finish(int64_t end_ns);
unsigned insp_conn_count(void);
void insp_conn_shutdown(void);

/* avp.c: what listing a message's AVPs found out on the way */
struct insp_avp_info {
	int n_avps;		/* -1: an AVP header was malformed */
	bool hidden;		/* some AVP had H=1 */
	char unknown_m[256];	/* the unrecognised M=1 AVPs, named */
	char at[48];		/* the first recognised AVP the codec did not store */
};
void insp_avp_render(struct insp_rec *r, const struct insp_pkt *pk, const struct l2tp_msg *m,
		     enum l2tp_drop rc, struct insp_avp_info *info);
void insp_avp_missing(const struct l2tp_msg *m, char *buf, size_t len);

/* out.c */
void insp_out_init(const struct insp_opts *o);
struct insp_rec *insp_rec_new(const struct insp_pkt *pk);
void insp_rec_header(struct insp_rec *r, unsigned conn, int dir, const struct l2tp_msg *m,
		     const char *type);
/* A data message to session sid: a record only when something is wrong with it. */
void insp_rec_data(struct insp_rec *r, unsigned conn, int dir, uint32_t sid);
void insp_rec_avp(struct insp_rec *r, const char *key, const char *text, const char *json);
enum insp_list {
	INSP_LIST_SKIPPED,	/* unknown M=0, or a vendor AVP the codec recognises and skips */
	INSP_LIST_V2COMPAT,	/* an RFC 2661 AVP the codec recognises and ignores */
	INSP_LIST_UNKNOWN_M,	/* unknown with M=1: the daemon would clear the session/connection */
};
void insp_rec_list(struct insp_rec *r, enum insp_list list, const char *what);
void insp_rec_note(struct insp_rec *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void insp_rec_violation(struct insp_rec *r, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void insp_rec_retransmission(struct insp_rec *r, unsigned copy, int64_t interval_ns);
void insp_rec_hold(struct insp_rec *r, bool hold);
void insp_out_flush(bool all);
void insp_out_data(void);
void insp_out_conn(unsigned id, const char *text, const char *json);
void insp_out_summary(unsigned frames, unsigned connections);
unsigned insp_out_violations(void);

/* Small JSON/text helpers shared by avp.c and out.c. */
void insp_json_str(char *buf, size_t len, const uint8_t *p, size_t n);
void insp_text_str(char *buf, size_t len, const uint8_t *p, size_t n);
void insp_hex(char *buf, size_t len, const uint8_t *p, size_t n);

#endif
