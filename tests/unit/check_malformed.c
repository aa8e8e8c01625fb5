/*
 * tests/unit/check_malformed.c - what the decoder refuses, flags or skips.
 *
 * Each case is a hex string: "LLLL" stands for the header Length, filled
 * in with the real one (write explicit digits to lie about it).  With
 * F_HIDE, every AVP with the H bit has its value (written as the plaintext
 * hidden subformat: length, value, padding) hidden with SECRET and the last
 * Random Vector before it, the way a peer would send it.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "usl/buf.h"
#include "proto/auth.h"
#include "proto/msg.h"
#include "wire-oracle-samples.h"

#define F_IP		0x01	/* has_session0 */
#define F_SECRET	0x02	/* decode with SECRET */
#define F_HIDE		0x04	/* hide the H=1 values first (needs F_SECRET to read back) */
#define SECRET		"tunnel-secret"

/* Header (CCID 1, Ns 0, Nr 0) and AVPs, as hex. */
#define HDR		"c803 LLLL 00000001 0000 0000 "
#define HDR_V2		"c802 LLLL 00000000 0000 0000 "
#define S0		"00000000 "
#define MT(t)		"8008 0000 0000 " t " "
#define SCCRQ		MT("0001")
#define SCCRP		MT("0002")
#define SCCCN		MT("0003")
#define STOPCCN		MT("0004")
#define HELLO		MT("0006")
#define OCRQ		MT("0007")
#define OCRP		MT("0008")
#define OCCN		MT("0009")
#define ICRQ		MT("000a")
#define ICRP		MT("000b")
#define ICCN		MT("000c")
#define CDN		MT("000e")
#define WEN		MT("000f")
#define SLI		MT("0010")
#define ACK		MT("0014")
#define HOST		"8009 0000 0007 6c6163 "			/* "lac" */
#define RID		"800a 0000 003c 0a000001 "
#define CCID		"800a 0000 003d 00000001 "
#define PWC		"8008 0000 003e 0005 "
#define RESULT		"8008 0000 0001 0001 "
#define LSID		"800a 0000 003f 00000011 "
#define RSID		"800a 0000 0040 00000022 "
#define RSID0		"800a 0000 0040 00000000 "
#define SERIAL		"000a 0000 000f 00000001 "
#define PWT		"8008 0000 0044 0005 "
#define ENDID		"8009 0000 0042 656e64 "			/* "end" */
#define CIRC		"8008 0000 0047 0001 "
#define CERR		"8020 0000 0022 0000 00000001 00000002 00000003 00000004 00000005 00000006 "
#define RV		"8016 0000 0024 00112233445566778899aabbccddeeff "
#define DIGEST_MD5	"8017 0000 003b 00 00000000000000000000000000000000 "
#define DIGEST_SHA1	"801b 0000 003b 01 0000000000000000000000000000000000000000 "
#define SCCRQ_REQ	HOST RID CCID PWC
#define XCRQ_REQ	LSID RSID0 SERIAL PWT ENDID CIRC
#define XCRP_REQ	LSID RSID CIRC

struct mcase {
	const char *name;
	const char *hex;
	unsigned flags;
	enum l2tp_drop want;
	/* when want is L2TP_DROP_NONE: the expected flags and skip count */
	uint16_t unk_vendor, unk_type;
	bool unknown;
	unsigned skipped;
};

#define DROP(name, hex, fl, why)	{ name, hex, fl, L2TP_DROP_##why, 0, 0, false, 0 }
#define OK(name, hex, fl, skipped)	{ name, hex, fl, L2TP_DROP_NONE, 0, 0, false, skipped }
#define FLAG(name, hex, fl, v, t, skipped) { name, hex, fl, L2TP_DROP_NONE, v, t, true, skipped }

static const struct mcase cases[] = {
	/* header */
	DROP("empty datagram", "", 0, SHORT_HEADER),
	DROP("11-octet header", "c803 000b 00000001 0000 00", 0, SHORT_HEADER),
	DROP("IP: session ID only", S0, F_IP, SHORT_HEADER),
	DROP("IP: 3 octets", "000000", F_IP, SHORT_HEADER),
	DROP("IP: nonzero session ID", "00000001 " HDR, F_IP, IP_SESSION_NONZERO),
	DROP("T bit clear (data)", "4803 LLLL 00000001 0000 0000", 0, NOT_CONTROL),
	DROP("Ver 1", "c801 LLLL 00000001 0000 0000", 0, BAD_VERSION),
	DROP("Ver 4", "c804 LLLL 00000001 0000 0000", 0, BAD_VERSION),
	DROP("Ver 15", "c80f LLLL 00000001 0000 0000", 0, BAD_VERSION),
	DROP("Ver 2 HELLO", HDR_V2 HELLO, 0, BAD_VERSION),
	DROP("Ver 2 ZLB", HDR_V2, 0, BAD_VERSION),
	DROP("Ver 2 SCCRQ over IP", S0 HDR_V2 SCCRQ SCCRQ_REQ, F_IP, BAD_VERSION),
	DROP("L bit clear", "8803 LLLL 00000001 0000 0000", 0, NO_LENGTH_BIT),
	DROP("S bit clear", "c003 LLLL 00000001 0000 0000", 0, NO_SEQ_BIT),
	DROP("Length beyond the datagram", "c803 000d 00000001 0000 0000", 0, LENGTH_MISMATCH),
	DROP("Length short of the datagram", "c803 000c 00000001 0000 0000 " HELLO, 0,
	     LENGTH_MISMATCH),
	DROP("IP: Length counts the session ID", S0 "c803 0010 00000001 0000 0000", F_IP,
	     LENGTH_MISMATCH),
	OK("reserved header bits ignored", "fff3 LLLL 00000001 0000 0000", 0, 0),
	OK("ZLB", HDR, 0, 0),
	OK("IP: ZLB", S0 HDR, F_IP, 0),

	/* AVP framing */
	DROP("AVP length 0", HDR "0000 0000 0000", 0, AVP_TOO_SHORT),
	DROP("AVP length 5", HDR "8005 0000 0000 0006", 0, AVP_TOO_SHORT),
	DROP("second AVP length 4", HDR HELLO "8004 0000 0024", 0, AVP_TOO_SHORT),
	DROP("AVP past the end", HDR SCCRQ "800a 0000 003c 0a00", 0, AVP_OVERRUN),
	DROP("truncated AVP header", HDR HELLO "8008 00", 0, AVP_OVERRUN),
	/* 7.1: a malformed AVP whose M bit reads 0 is ignored */
	DROP("one stray octet", HDR HELLO "00", 0, NONE),
	DROP("one stray octet, M bit set", HDR HELLO "80", 0, AVP_OVERRUN),
	DROP("IP: AVP past the end", S0 HDR ICCN LSID "800a 0000 0040 0000", F_IP, AVP_OVERRUN),

	/* Message Type */
	DROP("first AVP not Message Type", HDR HOST SCCRQ, 0, FIRST_AVP_NOT_MSG_TYPE),
	DROP("hidden Message Type", HDR "c008 0000 0000 0006", 0, FIRST_AVP_NOT_MSG_TYPE),
	DROP("Message Type of 3 octets", HDR "8009 0000 0000 000600", 0, BAD_AVP_LENGTH),
	DROP("Message Type of 1 octet", HDR "8007 0000 0000 06", 0, BAD_AVP_LENGTH),
	DROP("unknown message type 5, M=1", HDR MT("0005"), 0, UNKNOWN_MSG_TYPE),
	DROP("unknown message type 99, M=1", HDR MT("0063"), 0, UNKNOWN_MSG_TYPE),
	DROP("message type 0", HDR MT("0000"), 0, UNKNOWN_MSG_TYPE),
	DROP("unknown message type, M=0", HDR "0008 0000 0000 0063", 0, UNKNOWN_MSG_TYPE),
	DROP("vendor message type", HDR "8008 0009 0000 0001", 0, UNKNOWN_MSG_TYPE),
	DROP("two Message Types", HDR HELLO HELLO, 0, DUPLICATE_AVP),

	/* fixed sizes and values (M=1) */
	DROP("Assigned CCID of 3 octets", HDR SCCRQ HOST RID "8009 0000 003d 000001 " PWC, 0,
	     BAD_AVP_LENGTH),
	DROP("Assigned CCID of 5 octets", HDR SCCRQ HOST RID "800b 0000 003d 0000000001 " PWC,
	     0, BAD_AVP_LENGTH),
	DROP("Router ID of 5 octets", HDR SCCRQ HOST "800b 0000 003c 0a00000100 " CCID PWC, 0,
	     BAD_AVP_LENGTH),
	DROP("Receive Window of 1 octet", HDR SCCRQ SCCRQ_REQ "8007 0000 000a 04", 0,
	     BAD_AVP_LENGTH),
	DROP("Tie Breaker of 7 octets", HDR SCCRQ SCCRQ_REQ "800d 0000 0005 01020304050607", 0,
	     BAD_AVP_LENGTH),
	DROP("Host Name empty", HDR SCCRQ "8006 0000 0007 " RID CCID PWC, 0, BAD_AVP_LENGTH),
	DROP("PW Capabilities odd", HDR SCCRQ HOST RID CCID "8009 0000 003e 000500", 0,
	     BAD_AVP_LENGTH),
	DROP("PW Capabilities empty", HDR SCCRQ HOST RID CCID "8006 0000 003e", 0,
	     BAD_AVP_LENGTH),
	DROP("Nonce of 65 octets", HDR SCCRQ SCCRQ_REQ "8047 0000 0049 "
	     "00000000000000000000000000000000000000000000000000000000000000000000000000000000"
	     "00000000000000000000000000000000000000000000000000", 0, BAD_AVP_LENGTH),
	DROP("Assigned CCID zero", HDR SCCRQ HOST RID "800a 0000 003d 00000000 " PWC, 0,
	     BAD_AVP_VALUE),
	DROP("Result Code of 3 octets", HDR STOPCCN "8009 0000 0001 000100", 0, BAD_AVP_LENGTH),
	DROP("Result Code of 1 octet", HDR STOPCCN "8007 0000 0001 01", 0, BAD_AVP_LENGTH),
	DROP("Local Session ID of 2 octets", HDR ICCN "8008 0000 003f 0011 " RSID, 0,
	     BAD_AVP_LENGTH),
	DROP("Local Session ID zero", HDR ICCN "800a 0000 003f 00000000 " RSID, 0,
	     BAD_AVP_VALUE),
	DROP("Remote Session ID of 8 octets", HDR ICCN LSID "800e 0000 0040 0000000000000022",
	     0, BAD_AVP_LENGTH),
	DROP("Cookie of 3 octets", HDR ICRP XCRP_REQ "8009 0000 0041 010203", 0, BAD_AVP_VALUE),
	DROP("Cookie of 6 octets", HDR ICRP XCRP_REQ "800c 0000 0041 010203040506", 0,
	     BAD_AVP_VALUE),
	DROP("Cookie of 12 octets", HDR ICRP XCRP_REQ "8012 0000 0041 0102030405060708090a0b0c",
	     0, BAD_AVP_LENGTH),
	DROP("PW Type of 4 octets", HDR ICRQ LSID RSID0 SERIAL "800a 0000 0044 00000005 " ENDID
	     CIRC, 0, BAD_AVP_LENGTH),
	DROP("Circuit Status of 1 octet", HDR SLI LSID RSID "8007 0000 0047 01", 0,
	     BAD_AVP_LENGTH),
	DROP("L2-Specific Sublayer of 4 octets", HDR ICCN LSID RSID "800a 0000 0045 00000001",
	     0, BAD_AVP_LENGTH),
	DROP("Circuit Errors of 25 octets", HDR WEN LSID RSID "801f 0000 0022 0000 00000001 "
	     "00000002 00000003 00000004 00000005 000006", 0, BAD_AVP_LENGTH),
	DROP("Serial Number of 3 octets, M=1", HDR ICRQ LSID RSID0 "8009 0000 000f 000001 " PWT
	     ENDID CIRC, 0, BAD_AVP_LENGTH),
	DROP("Tx Connect Speed of 4 octets, M=1", HDR ICCN LSID RSID "800a 0000 004a 00989680",
	     0, BAD_AVP_LENGTH),
	DROP("v2 Tx Connect Speed of 8 octets, M=1", HDR ICCN LSID RSID
	     "800e 0000 0018 0000000000989680", 0, BAD_AVP_LENGTH),
	/* RFC 3931 7.1's own example: a 4-octet Rx Connect Speed with M=0 is ignored */
	OK("Rx Connect Speed of 4 octets, M=0", HDR ICCN LSID RSID "000a 0000 004b 00989680", 0,
	   1),
	/* ...but ignoring a required AVP leaves the message incomplete */
	DROP("Assigned CCID of 3 octets, M=0", HDR SCCRQ HOST RID "0009 0000 003d 000001 " PWC,
	     0, MISSING_AVP),
	DROP("Host Name hidden (never hideable)", HDR SCCRQ RV "c009 0000 0007 6c6163 " RID
	     CCID PWC, F_SECRET, BAD_AVP_VALUE),
	DROP("Router ID hidden (never hideable)", HDR SCCRQ HOST RV "c00c 0000 003c 00040a000001 "
	     CCID PWC, F_SECRET | F_HIDE, BAD_AVP_VALUE),

	/* hidden AVPs */
	OK("hidden Assigned CCID", HDR SCCRQ HOST RID RV "c00c 0000 003d 000400000001 " PWC,
	   F_SECRET | F_HIDE, 0),
	OK("hidden, padded", HDR SCCRQ HOST RID RV "c014 0000 003d 000400000001 a5a5a5a5a5a5a5a5 "
	   PWC, F_SECRET | F_HIDE, 0),
	OK("IP: hidden Local and Remote Session IDs", S0 HDR ICCN RV
	   "c00c 0000 003f 000400000011 c00c 0000 0040 000400000022", F_IP | F_SECRET | F_HIDE,
	   0),
	DROP("hidden without Random Vector", HDR SCCRQ HOST RID "c00c 0000 003d 000400000001 " PWC,
	     F_SECRET, HIDDEN_NO_RANDOM_VECTOR),
	DROP("hidden before the Random Vector", HDR SCCRQ HOST RID "c00c 0000 003d 000400000001 "
	     RV PWC, F_SECRET, HIDDEN_NO_RANDOM_VECTOR),
	DROP("hidden without secret", HDR SCCRQ HOST RID RV "c00c 0000 003d 000400000001 " PWC,
	     F_HIDE, HIDDEN_NO_SECRET),
	DROP("hidden sub-length too large", HDR SCCRQ HOST RID RV "c00c 0000 003d 000500000001 "
	     PWC, F_SECRET | F_HIDE, HIDDEN_BAD_LENGTH),
	DROP("hidden sub-length 0xffff", HDR SCCRQ HOST RID RV "c00c 0000 003d ffff00000001 "
	     PWC, F_SECRET | F_HIDE, HIDDEN_BAD_LENGTH),
	DROP("hidden value of 1 octet", HDR SCCRQ HOST RID RV "c007 0000 003d 00 " PWC,
	     F_SECRET | F_HIDE, HIDDEN_BAD_LENGTH),
	DROP("hidden Assigned CCID of 3 octets", HDR SCCRQ HOST RID RV "c00b 0000 003d 0003000001 "
	     PWC, F_SECRET | F_HIDE, BAD_AVP_LENGTH),

	/* required AVPs, one case per message type (RFC 3931 6) */
	DROP("SCCRQ without Host Name", HDR SCCRQ RID CCID PWC, 0, MISSING_AVP),
	DROP("SCCRQ without Router ID", HDR SCCRQ HOST CCID PWC, 0, MISSING_AVP),
	DROP("SCCRP without PW Capabilities", HDR SCCRP HOST RID CCID, 0, MISSING_AVP),
	DROP("StopCCN without Result Code", HDR STOPCCN CCID, 0, MISSING_AVP),
	DROP("ICRQ without Remote Session ID", HDR ICRQ LSID SERIAL PWT ENDID CIRC, 0,
	     MISSING_AVP),
	/* required by the RFC, omitted by real LACs, needed by nothing: accepted */
	DROP("ICRQ without Serial Number", HDR ICRQ LSID RSID0 PWT ENDID CIRC, 0, NONE),
	DROP("ICRP without Circuit Status", HDR ICRP LSID RSID, 0, MISSING_AVP),
	DROP("ICCN without Local Session ID", HDR ICCN RSID, 0, MISSING_AVP),
	DROP("OCRQ without PW Type", HDR OCRQ LSID RSID0 SERIAL ENDID CIRC, 0, MISSING_AVP),
	DROP("OCRP without Remote Session ID", HDR OCRP LSID CIRC, 0, MISSING_AVP),
	DROP("OCCN without Remote Session ID", HDR OCCN LSID, 0, MISSING_AVP),
	DROP("CDN without Result Code", HDR CDN LSID RSID, 0, MISSING_AVP),
	DROP("WEN without Circuit Errors", HDR WEN LSID RSID, 0, MISSING_AVP),
	DROP("SLI without Local Session ID", HDR SLI RSID, 0, MISSING_AVP),
	OK("SCCCN with nothing else", HDR SCCCN, 0, 0),
	OK("HELLO with nothing else", HDR HELLO, 0, 0),
	OK("ACK with nothing else", HDR ACK, 0, 0),
	OK("every type's minimum: ICRQ", HDR ICRQ XCRQ_REQ, 0, 0),
	OK("every type's minimum: WEN", HDR WEN LSID RSID CERR, 0, 0),
	OK("CDN with a bare 2-octet Result Code", HDR CDN RESULT LSID RSID, 0, 0),
	OK("ICRP with Serial Number, Remote End ID, PW Type", HDR ICRP XCRP_REQ SERIAL ENDID PWT,
	   0, 0),
	OK("SCCRQ with Bearer Capabilities, M=1", HDR SCCRQ SCCRQ_REQ "800a 0000 0004 00000003",
	   0, 1),

	/* repeats */
	DROP("two different Router IDs", HDR SCCRQ SCCRQ_REQ "800a 0000 003c 0a000002", 0,
	     DUPLICATE_AVP),
	DROP("two different Local Session IDs", HDR ICCN LSID RSID "800a 0000 003f 00000012", 0,
	     DUPLICATE_AVP),
	OK("the same PW Type twice (Cisco)", HDR ICRQ XCRQ_REQ PWT, 0, 1),
	OK("two Random Vectors", HDR HELLO RV RV, 0, 0),

	/* Message Digest */
	OK("one digest", HDR HELLO DIGEST_MD5, 0, 0),
	OK("two digests", HDR HELLO DIGEST_MD5 DIGEST_SHA1, 0, 0),
	DROP("three digests", HDR HELLO DIGEST_MD5 DIGEST_SHA1 DIGEST_MD5, 0, DUPLICATE_AVP),
	DROP("digest not right after Message Type", HDR HELLO RV DIGEST_MD5, 0, BAD_AVP_VALUE),
	DROP("digest type 2", HDR HELLO "8017 0000 003b 02 00000000000000000000000000000000", 0,
	     BAD_AVP_VALUE),
	DROP("MD5 digest of 20 octets", HDR HELLO
	     "801b 0000 003b 00 0000000000000000000000000000000000000000", 0, BAD_AVP_LENGTH),
	DROP("empty digest", HDR HELLO "8006 0000 003b", 0, BAD_AVP_LENGTH),
	DROP("hidden digest", HDR HELLO "c017 0000 003b 00 00000000000000000000000000000000", 0,
	     BAD_AVP_VALUE),

	/* unrecognised AVPs: flagged with M=1, skipped with M=0 */
	FLAG("unknown IETF AVP, M=1", HDR HELLO "8008 0000 00c8 0001", 0, 0, 200, 0),
	FLAG("unassigned IETF type 20, M=1", HDR HELLO "8006 0000 0014", 0, 0, 20, 0),
	FLAG("hidden unknown AVP, M=1", HDR HELLO "c008 0000 00c8 0001", 0, 0, 200, 0),
	FLAG("vendor AVP, M=1", HDR HELLO "8008 0137 0001 0001", 0, 311, 1, 0),
	FLAG("DEPI vendor AVP, M=1", HDR ICCN LSID RSID "8008 118b 006b 0000", 0, 4491, 107, 0),
	FLAG("Cisco draft nonce, M=1 (not ignored)", HDR SCCRQ SCCRQ_REQ "800a 0009 000d 01020304",
	     0, 9, 13, 0),
	FLAG("Extended Vendor ID, M=1", HDR HELLO "800c 0000 003a 00000137 0001", 0, 0, 58, 0),
	FLAG("first unknown is reported", HDR HELLO "8006 0137 0002 8006 0000 00c9", 0, 311, 2,
	     0),
	OK("unknown IETF AVP, M=0", HDR HELLO "0008 0000 00c8 0001", 0, 1),
	OK("vendor AVP, M=0", HDR HELLO "0008 0137 0001 0001", 0, 1),
	OK("vendor AVP of length 6, M=0", HDR HELLO "0006 0009 0073", 0, 1),
	OK("Extended Vendor ID, M=0", HDR HELLO "000c 0000 003a 00000137 0001", 0, 1),
	OK("Cisco draft AVPs, M=1", HDR SCCRQ SCCRQ_REQ "800a 0009 0001 00000001 8008 0009 0002 "
	   "0005 8008 0009 000a 0001", 0, 3),
	OK("v2 AVPs with M=1 (Cisco SCCRP)", HDR SCCRP SCCRQ_REQ "8008 0000 0002 0100 "
	   "800a 0000 0003 00000000 800a 0000 0004 00000000", 0, 3),
	OK("v2 Assigned Tunnel/Session ID, Challenge, M=1", HDR HELLO "8008 0000 0009 0001 "
	   "8008 0000 000e 0001 800a 0000 000b 01020304", 0, 3),
	OK("v2 Sequencing Required (length 6), M=1", HDR ICRQ XCRQ_REQ "8006 0000 0027", 0, 1),
	OK("v2 hidden AVP without secret, M=1", HDR HELLO "c00a 0000 0009 00020001", 0, 1),
	OK("v2 4-octet Tx Connect Speed", HDR ICCN LSID RSID "000a 0000 0018 00989680", 0, 0),
	OK("v2 SCCRQ over UDP", HDR_V2 SCCRQ SCCRQ_REQ "8008 0000 0002 0100", 0, 1),
	OK("v2 SCCRQ: unknown M=1 AVPs ignored", HDR_V2 SCCRQ SCCRQ_REQ "8008 0000 00c8 0001 "
	   "8008 0137 0001 0001", 0, 2),
};

static uint8_t buf[L2TP_MAX_MSG + 64];
static struct l2tp_msg m;
static const struct l2tp_secret secret = { (const uint8_t *)SECRET, sizeof(SECRET) - 1 };

static unsigned hexval(char c)
{
	return c <= '9' ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10);
}

/* Parses hex into buf; returns the length, *len_off the "LLLL" position. */
static size_t parse_hex(const char *s, size_t *len_off)
{
	size_t n = 0;

	*len_off = SIZE_MAX;
	while (*s) {
		if (*s == ' ') {
			s++;
		} else if (*s == 'L') {
			ck_assert(strncmp(s, "LLLL", 4) == 0);
			*len_off = n;
			buf[n++] = 0;
			buf[n++] = 0;
			s += 4;
		} else {
			ck_assert_msg(s[1] && s[1] != ' ', "odd hex digit count");
			ck_assert_uint_lt(n, sizeof(buf));
			buf[n++] = (uint8_t)(hexval(s[0]) << 4 | hexval(s[1]));
			s += 2;
		}
	}
	return n;
}

/* Hides each H=1 value in place, as a peer with SECRET would. */
static void hide_values(size_t off, size_t len)
{
	uint8_t key[L2TP_AUTH_KEY_LEN];
	const uint8_t *rv = NULL;
	size_t rv_len = 0, alen;
	uint16_t fl, type;

	l2tp_derive_key(secret.p, secret.len, L2TP_KEY_ID_HIDE, key);
	for (; off + L2TP_AVP_HDR_LEN <= len; off += alen) {
		fl = usl_get_be16(buf + off);
		type = usl_get_be16(buf + off + 4);
		alen = fl & L2TP_AVP_LEN_MASK;
		ck_assert_uint_ge(alen, L2TP_AVP_HDR_LEN);
		ck_assert_uint_le(off + alen, len);
		if (type == L2TP_AVP_RANDOM_VECTOR) {
			rv = buf + off + L2TP_AVP_HDR_LEN;
			rv_len = alen - L2TP_AVP_HDR_LEN;
		} else if ((fl & L2TP_AVP_F_H) && rv) {
			l2tp_hide(key, type, rv, rv_len, buf + off + L2TP_AVP_HDR_LEN,
				  alen - L2TP_AVP_HDR_LEN, false);
		}
	}
}

START_TEST(test_case)
{
	const struct mcase *c = &cases[_i];
	bool ip = c->flags & F_IP;
	size_t len, len_off, hdr = ip ? L2TP_IP_SESSION0_LEN : 0;
	enum l2tp_drop rc;

	len = parse_hex(c->hex, &len_off);
	if (len_off != SIZE_MAX)
		usl_put_be16(buf + len_off, (uint16_t)(len - hdr));
	if (c->flags & F_HIDE)
		hide_values(hdr + L2TP_CTRL_HDR_LEN, len);
	rc = l2tp_msg_decode(&m, buf, len, ip, (c->flags & F_SECRET) ? &secret : NULL);
	ck_assert_msg(rc == c->want, "%s: got %s, want %s", c->name, l2tp_drop_name(rc),
		      l2tp_drop_name(c->want));
	if (rc != L2TP_DROP_NONE)
		return;
	ck_assert_msg(m.has_unknown_mandatory == c->unknown, "%s: unknown mandatory %d", c->name,
		      m.has_unknown_mandatory);
	if (c->unknown) {
		ck_assert_uint_eq(m.unknown_mandatory_vendor, c->unk_vendor);
		ck_assert_uint_eq(m.unknown_mandatory_type, c->unk_type);
	}
	ck_assert_msg(m.n_skipped == c->skipped, "%s: skipped %u, want %u", c->name, m.n_skipped,
		      c->skipped);
}
END_TEST

/* Details the table does not show. */
START_TEST(test_case_details)
{
	size_t len, off;

	len = parse_hex(HDR "0008 0000 0000 0063", &off);
	usl_put_be16(buf + off, (uint16_t)len);
	ck_assert_int_eq(l2tp_msg_decode(&m, buf, len, false, NULL), L2TP_DROP_UNKNOWN_MSG_TYPE);
	ck_assert(!m.type_m);		/* M=0: the FSM may ignore it */
	ck_assert_uint_eq(m.ccid, 1);

	len = parse_hex(HDR MT("0063"), &off);
	usl_put_be16(buf + off, (uint16_t)len);
	ck_assert_int_eq(l2tp_msg_decode(&m, buf, len, false, NULL), L2TP_DROP_UNKNOWN_MSG_TYPE);
	ck_assert(m.type_m);		/* M=1: clear the connection */

	len = parse_hex(HDR ICCN LSID RSID "000a 0000 0018 00989680", &off);
	usl_put_be16(buf + off, (uint16_t)len);
	ck_assert_int_eq(l2tp_msg_decode(&m, buf, len, false, NULL), L2TP_DROP_NONE);
	ck_assert(l2tp_msg_has(&m, L2TP_AVP_TX_CONNECT_SPEED_BPS));
	ck_assert_uint_eq(m.tx_speed, 10000000);

	len = parse_hex(HDR CDN RESULT LSID RSID, &off);
	usl_put_be16(buf + off, (uint16_t)len);
	ck_assert_int_eq(l2tp_msg_decode(&m, buf, len, false, NULL), L2TP_DROP_NONE);
	ck_assert_uint_eq(m.result.result, 1);
	ck_assert(!m.result.has_error);
	ck_assert_uint_eq(m.result.message.len, 0);

	len = parse_hex(HDR SCCRQ HOST RID RV "c014 0000 003d 000400000001 a5a5a5a5a5a5a5a5 " PWC,
			&off);
	usl_put_be16(buf + off, (uint16_t)len);
	hide_values(L2TP_CTRL_HDR_LEN, len);
	ck_assert_int_eq(l2tp_msg_decode(&m, buf, len, false, &secret), L2TP_DROP_NONE);
	ck_assert_uint_eq(m.assigned_ccid, 1);
	ck_assert_uint_eq(m.scratch_used, 4);
}
END_TEST

/* Every truncation of a header: 0..11 octets over UDP, 0..15 over IP. */
START_TEST(test_truncated_header)
{
	static const uint8_t hdr[] = { 0xc8, 0x03, 0x00, 0x0c, 0, 0, 0, 1, 0, 0, 0, 0 };
	bool ip = _i >= L2TP_CTRL_HDR_LEN;
	size_t n = ip ? (size_t)_i - L2TP_CTRL_HDR_LEN : (size_t)_i;
	uint8_t pkt[L2TP_IP_SESSION0_LEN + sizeof(hdr)] = { 0 };

	memcpy(pkt + (ip ? L2TP_IP_SESSION0_LEN : 0), hdr, sizeof(hdr));
	ck_assert_int_eq(l2tp_msg_decode(&m, pkt, n, ip, NULL), L2TP_DROP_SHORT_HEADER);
	ck_assert_int_eq(l2tp_msg_decode_header(&m, pkt, n, ip), L2TP_DROP_SHORT_HEADER);
	/* one more octet is a whole header (a ZLB) */
	if (n + 1 == sizeof(pkt) - (ip ? 0 : L2TP_IP_SESSION0_LEN))
		ck_assert_int_eq(l2tp_msg_decode(&m, pkt, n + 1, ip, NULL), L2TP_DROP_NONE);
}
END_TEST

/* A header Length above L2TP_MAX_MSG is refused even when it is true. */
START_TEST(test_too_long)
{
	static uint8_t big[L2TP_CTRL_HDR_LEN + 8 + 4 * L2TP_AVP_MAX_LEN];
	size_t off, len = sizeof(big);

	ck_assert_uint_gt(len, L2TP_MAX_MSG);
	memset(big, 0, sizeof(big));
	usl_put_be16(big, 0xc803);
	usl_put_be16(big + 2, (uint16_t)len);
	usl_put_be16(big + 12, 0x8008);
	usl_put_be16(big + 18, L2TP_MSG_HELLO);
	for (off = 20; off < len; off += L2TP_AVP_MAX_LEN) {
		usl_put_be16(big + off, L2TP_AVP_MAX_LEN);	/* vendor 311, M=0 */
		usl_put_be16(big + off + 2, 311);
	}
	ck_assert_int_eq(l2tp_msg_decode(&m, big, len, false, NULL), L2TP_DROP_LENGTH_MISMATCH);
	/* the same with one AVP less fits */
	len -= L2TP_AVP_MAX_LEN;
	usl_put_be16(big + 2, (uint16_t)len);
	ck_assert_int_eq(l2tp_msg_decode(&m, big, len, false, NULL), L2TP_DROP_NONE);
	ck_assert_uint_eq(m.n_skipped, 3);
}
END_TEST

/* xorshift64*: reproducible, so a failure can be replayed from the seed. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dULL) >> 32);
}

/* The seeds to mutate: every sample, plain, hidden, with digests, UDP and IP. */
static size_t seed(unsigned i, uint8_t *out, size_t cap, bool *ip)
{
	static const uint8_t rv[] = "mutation-rv-0123";
	uint64_t hide = 0, hide2 = 0;
	int len;

	*ip = i & 1;
	sample_build((i / 4) % n_samples, &m);
	if (i & 2) {
		m.random_vector.p = rv;
		m.random_vector.len = sizeof(rv) - 1;
		l2tp_msg_set(&m, L2TP_AVP_RANDOM_VECTOR);
		hide = L2TP_AVP_BIT(L2TP_AVP_ASSIGNED_CCID) | L2TP_AVP_BIT(L2TP_AVP_LOCAL_SESSION_ID) |
		       L2TP_AVP_BIT(L2TP_AVP_VENDOR_NAME) | L2TP_AVP_BIT(L2TP_AVP_CIRCUIT_ERRORS);
		hide2 = L2TP_AVP_BIT(L2TP_AVP_ASSIGNED_COOKIE - 64) |
			L2TP_AVP_BIT(L2TP_AVP_REMOTE_END_ID - 64);
		m.n_digests = 1;
		m.digest[0].type = L2TP_DIGEST_HMAC_SHA1;
	}
	len = l2tp_msg_encode2(&m, out, cap, *ip, hide, hide2, &secret);
	ck_assert_int_gt(len, 0);
	return (size_t)len;
}

static void mutate(uint8_t *p, size_t *len, size_t cap)
{
	unsigned k, n = 1 + rnd() % 4;
	size_t at;

	for (k = 0; k < n; k++) {
		switch (rnd() % 6) {
		case 0:		/* flip a bit */
		case 1:
			if (*len)
				p[rnd() % *len] ^= (uint8_t)(1u << (rnd() % 8));
			break;
		case 2:		/* a random byte */
			if (*len)
				p[rnd() % *len] = (uint8_t)rnd();
			break;
		case 3:		/* truncate */
			if (*len)
				*len = rnd() % *len;
			break;
		case 4:		/* grow with random bytes */
			at = *len + rnd() % 16;
			while (*len < at && *len < cap)
				p[(*len)++] = (uint8_t)rnd();
			break;
		case 5:		/* an AVP length field somewhere: the interesting one */
			if (*len > 2) {
				at = rnd() % (*len - 1);
				usl_put_be16(p + at, (uint16_t)((p[at] & 0xfc) << 8 | (rnd() & 0x3ff)));
			}
			break;
		}
	}
}

/* Keeps the header consistent half of the time so the AVP walk gets exercised. */
static void fix_length(uint8_t *p, size_t len, bool ip)
{
	size_t h = ip ? 4 : 0;

	if (len >= h + 4 && rnd() % 2)
		usl_put_be16(p + h + 2, (uint16_t)(len - h));
}

/*
 * 100,000 mutated or random buffers: decode must never crash or read out
 * of bounds (run under ASan or valgrind), and whatever decodes must encode
 * and decode again to the same message.
 */
START_TEST(test_random)
{
	static uint8_t pkt[L2TP_MAX_MSG + 64], out[L2TP_MAX_MSG + 64];
	static struct l2tp_msg d, d2;
	unsigned i, ok = 0;
	enum l2tp_drop rc;
	const char *why;
	size_t len;
	bool ip;
	int n;

	for (i = 0; i < 100000; i++) {
		if (i % 10 == 0) {
			ip = rnd() & 1;
			len = rnd() % 96;
			for (n = 0; n < (int)len; n++)
				pkt[n] = (uint8_t)rnd();
			if (len > 16 && rnd() % 2) {
				memset(pkt, 0, 4);
				usl_put_be16(pkt + (ip ? 4 : 0), 0xc803);
			}
		} else {
			len = seed(rnd() % (n_samples * 4), pkt, sizeof(pkt), &ip);
			mutate(pkt, &len, sizeof(pkt));
		}
		fix_length(pkt, len, ip);
		/* an exact-size heap copy, so ASan sees any overread */
		{
			uint8_t *copy = malloc(len ? len : 1);

			ck_assert_ptr_nonnull(copy);
			memcpy(copy, pkt, len);
			rc = l2tp_msg_decode(&d, copy, len, ip, (i & 4) ? &secret : NULL);
			if (rc == L2TP_DROP_NONE) {
				ok++;
				d.present &= ~(L2TP_AVP_BIT(L2TP_AVP_TX_CONNECT_SPEED) |
					       L2TP_AVP_BIT(L2TP_AVP_RX_CONNECT_SPEED));
				/* accepted without a Serial Number, never sent without one */
				if ((d.type == L2TP_MSG_ICRQ || d.type == L2TP_MSG_OCRQ) &&
				    !l2tp_msg_has(&d, L2TP_AVP_SERIAL_NUMBER))
					l2tp_msg_set(&d, L2TP_AVP_SERIAL_NUMBER);
				n = l2tp_msg_encode(&d, out, sizeof(out), ip, 0, NULL);
				ck_assert_msg(n > 0, "iteration %u: decoded but does not encode", i);
				ck_assert_int_eq(l2tp_msg_decode(&d2, out, (size_t)n, ip, NULL),
						 L2TP_DROP_NONE);
				why = sample_msg_diff(&d, &d2);
				ck_assert_msg(why == NULL, "iteration %u: %s differs", i, why);
			}
			free(copy);
		}
	}
	/* the mutations must not all be rejected at the header */
	ck_assert_uint_gt(ok, 1000);
}
END_TEST

static Suite *malformed_suite(void)
{
	Suite *s = suite_create("malformed");
	TCase *tc = tcase_create("table");

	tcase_add_loop_test(tc, test_case, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, test_case_details);
	tcase_add_loop_test(tc, test_truncated_header, 0,
			    2 * L2TP_CTRL_HDR_LEN + L2TP_IP_SESSION0_LEN);
	tcase_add_test(tc, test_too_long);
	suite_add_tcase(s, tc);

	tc = tcase_create("random");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_random);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(malformed_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
