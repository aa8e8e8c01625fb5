/*
 * src/proto/avp.h - L2TPv3 AVP numbers, flags and per-AVP rules (RFC 3931 5).
 * Pure data and helpers; no I/O.
 */
#ifndef L2TP_AVP_H
#define L2TP_AVP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define L2TP_AVP_HDR_LEN	6
#define L2TP_AVP_MAX_LEN	1023
#define L2TP_AVP_F_M		0x8000
#define L2TP_AVP_F_H		0x4000
#define L2TP_AVP_F_RSVD		0x3c00
#define L2TP_AVP_LEN_MASK	0x03ff
#define L2TP_VENDOR_IETF	0

/* IETF AVP attribute types: RFC 3931 5.4 plus the RFC 2661 ones still seen on the wire. */
enum l2tp_avp_type {
	L2TP_AVP_MESSAGE_TYPE		= 0,
	L2TP_AVP_RESULT_CODE		= 1,
	L2TP_AVP_PROTOCOL_VERSION	= 2,	/* v2 only; ignored */
	L2TP_AVP_FRAMING_CAP		= 3,	/* v2 only; ignored */
	L2TP_AVP_BEARER_CAP		= 4,	/* v2 only; ignored */
	L2TP_AVP_TIE_BREAKER		= 5,
	L2TP_AVP_FIRMWARE_REVISION	= 6,
	L2TP_AVP_HOST_NAME		= 7,
	L2TP_AVP_VENDOR_NAME		= 8,
	L2TP_AVP_ASSIGNED_TUNNEL_ID	= 9,	/* v2 only; ignored */
	L2TP_AVP_RECV_WINDOW_SIZE	= 10,
	L2TP_AVP_CHALLENGE		= 11,	/* v2 only; ignored */
	L2TP_AVP_Q931_CAUSE		= 12,	/* v2 only; ignored */
	L2TP_AVP_CHALLENGE_RESPONSE	= 13,	/* v2 only; ignored */
	L2TP_AVP_ASSIGNED_SESSION_ID	= 14,	/* v2 only; ignored */
	L2TP_AVP_SERIAL_NUMBER		= 15,
	L2TP_AVP_MIN_BPS		= 16,
	L2TP_AVP_MAX_BPS		= 17,
	L2TP_AVP_BEARER_TYPE		= 18,
	L2TP_AVP_FRAMING_TYPE		= 19,
	L2TP_AVP_CALLED_NUMBER		= 21,
	L2TP_AVP_CALLING_NUMBER		= 22,
	L2TP_AVP_SUB_ADDRESS		= 23,
	L2TP_AVP_TX_CONNECT_SPEED	= 24,	/* v2 4-octet speed, accepted in ICCN */
	L2TP_AVP_PHYSICAL_CHANNEL_ID	= 25,
	L2TP_AVP_INITIAL_RCVD_LCP	= 26,
	L2TP_AVP_LAST_SENT_LCP		= 27,
	L2TP_AVP_LAST_RCVD_LCP		= 28,
	L2TP_AVP_PROXY_AUTHEN_TYPE	= 29,
	L2TP_AVP_PROXY_AUTHEN_NAME	= 30,
	L2TP_AVP_PROXY_AUTHEN_CHALLENGE	= 31,
	L2TP_AVP_PROXY_AUTHEN_ID	= 32,
	L2TP_AVP_PROXY_AUTHEN_RESPONSE	= 33,
	L2TP_AVP_CIRCUIT_ERRORS		= 34,
	L2TP_AVP_ACCM			= 35,
	L2TP_AVP_RANDOM_VECTOR		= 36,
	L2TP_AVP_PRIVATE_GROUP_ID	= 37,
	L2TP_AVP_RX_CONNECT_SPEED	= 38,	/* v2 4-octet speed, accepted in ICCN */
	L2TP_AVP_SEQUENCING_REQUIRED	= 39,
	L2TP_AVP_EXTENDED_VENDOR_ID	= 58,
	L2TP_AVP_MESSAGE_DIGEST		= 59,
	L2TP_AVP_ROUTER_ID		= 60,
	L2TP_AVP_ASSIGNED_CCID		= 61,
	L2TP_AVP_PW_CAP_LIST		= 62,
	L2TP_AVP_LOCAL_SESSION_ID	= 63,
	L2TP_AVP_REMOTE_SESSION_ID	= 64,
	L2TP_AVP_ASSIGNED_COOKIE	= 65,
	L2TP_AVP_REMOTE_END_ID		= 66,
	L2TP_AVP_PW_TYPE		= 68,
	L2TP_AVP_L2_SPECIFIC_SUBLAYER	= 69,
	L2TP_AVP_DATA_SEQUENCING	= 70,
	L2TP_AVP_CIRCUIT_STATUS		= 71,
	L2TP_AVP_PREFERRED_LANGUAGE	= 72,
	L2TP_AVP_CTRL_MSG_AUTH_NONCE	= 73,
	L2TP_AVP_TX_CONNECT_SPEED_BPS	= 74,
	L2TP_AVP_RX_CONNECT_SPEED_BPS	= 75,
	/* RFC 4951 (failover) */
	L2TP_AVP_FAILOVER_CAP		= 76,
	L2TP_AVP_TUNNEL_RECOVERY	= 77,
	L2TP_AVP_SUGGESTED_CTRL_SEQ	= 78,
	L2TP_AVP_FAILOVER_SESSION	= 79,
	L2TP_AVP_MAX_KNOWN		= 79,
};

/* Pseudowire types (IANA; values the Linux kernel uses). */
enum l2tp_pw_type {
	L2TP_PW_ETH_VLAN	= 0x0004,
	L2TP_PW_ETH		= 0x0005,
	L2TP_PW_PPP		= 0x0007,
	L2TP_PW_PPP_AC		= 0x0008,
	L2TP_PW_IP		= 0x000b,
};

/* Circuit Status bits (RFC 3931 5.4.5). */
#define L2TP_CIRCUIT_ACTIVE	0x0001	/* A */
#define L2TP_CIRCUIT_NEW	0x0002	/* N */

/*
 * What RFC 3931 5.4 (and RFC 2661 for the AVPs it keeps or obsoletes) says
 * about each IETF AVP: the decoder and the encoder both follow this table.
 */
#define L2TP_AVPR_HIDE_OK	0x01	/* may be sent hidden (H=1) */
#define L2TP_AVPR_SEND_M	0x02	/* we send it with M=1 */
#define L2TP_AVPR_REPEAT	0x04	/* may appear more than once */
#define L2TP_AVPR_IGNORE	0x08	/* recognised, meaningless in v3: skipped even with M=1 */
#define L2TP_AVPR_RECV_ONLY	0x10	/* accepted from peers, never sent */

struct l2tp_avp_rule {
	const char *name;
	uint16_t min_len, max_len;	/* value length (after unhiding), octets */
	uint8_t flags;			/* L2TP_AVPR_* */
};

/* The rule for IETF AVP type, or NULL when the type is not recognised. */
const struct l2tp_avp_rule *l2tp_avp_rule(uint16_t type);

#define L2TP_VENDOR_CISCO	9
#define L2TP_VENDOR_CABLELABS	4491

/*
 * True for vendor AVPs we recognise and ignore: Cisco's pre-RFC copies of
 * the L2TPv3 AVPs (vendor 9), which Cisco equipment still sends beside the
 * IETF ones, sometimes with M=1.
 */
bool l2tp_avp_vendor_ignored(uint16_t vendor, uint16_t type);

/* Name of an IETF AVP type ("Host Name"), or NULL when unknown. */
const char *l2tp_avp_name(uint16_t type);
/* Name of a pseudowire type ("Ethernet"), or "unknown". */
const char *l2tp_pw_type_name(uint16_t pw);

#endif
