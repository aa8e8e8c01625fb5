/*
 * tests/unit/check_capture.c - decode a real capture (Cisco RF Gateway 10,
 * L2TPv3 over IP) and compare with what tshark reads in it.
 *
 * The golden table was produced once with
 *   tshark -r cisco-rfgw10-l2tpv3-ip.pcap -T fields -e frame.number \
 *     -e l2tp.ccid -e l2tp.Ns -e l2tp.Nr -e l2tp.avp.message_type \
 *     -e l2tp.avp.local_session_id -e l2tp.avp.remote_session_id \
 *     -e l2tp.avp.mandatory -e l2tp.avp.vendor_id \
 *     -e l2tp.avp.ciscotype -e l2tp.avp.cablelabstype
 * The last four columns give the first vendor AVP with M=1 that we do not
 * recognise: CableLabs DEPI AVPs (vendor 4491) in the ICRQ/ICRP/ICCN.  An
 * LCCE without DEPI must answer those with CDN 2/8 (RFC 3931 5.2), so the
 * decoder flags them; Cisco's own draft-era AVPs (vendor 9) are recognised.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usl/buf.h"
#include "proto/msg.h"

#ifndef FIXTURES_DIR
#define FIXTURES_DIR "../shared/fixtures"
#endif
#define CAPTURE		FIXTURES_DIR "/pcap/cisco-rfgw10-l2tpv3-ip.pcap"
#define SKIP_RC		77	/* automake: test skipped */

#define PCAP_MAGIC_US	0xa1b2c3d4
#define PCAP_MAGIC_NS	0xa1b23c4d
#define LINKTYPE_ETHERNET 1
#define LINKTYPE_RAW	101
#define LINKTYPE_IPV4	228
#define ETH_P_IP	0x0800
#define ETH_P_8021Q	0x8100
#define IPPROTO_L2TP	115
#define MAX_FRAMES	256

struct golden {
	unsigned frame;
	uint16_t type;
	uint32_t ccid;
	uint16_t ns, nr;
	uint32_t local_sid, remote_sid;
	uint16_t unk_vendor, unk_type;	/* 0, 0: no unknown mandatory AVP */
};

static const struct golden golden[] = {
	/* frame, type, CCID, Ns, Nr, local SID, remote SID, unknown M=1 vendor/type */
	{   1, L2TP_MSG_SCCRQ,  0x00000000,     0,     0,         0u,         0u,    0,   0 },
	{   2, L2TP_MSG_SCCRQ,  0x00000000,     0,     0,         0u,         0u,    0,   0 },
	{   3, L2TP_MSG_STOPCCN, 0x4fa07d3f,    39,    79,         0u,         0u,    0,   0 },
	{   4, L2TP_MSG_SCCRP,  0xcc1f7e41,     0,     1,         0u,         0u,    0,   0 },
	{   5, L2TP_MSG_SCCCN,  0xbca70a2d,     1,     1,         0u,         0u,    0,   0 },
	{   6, L2TP_MSG_ICRQ,   0xbca70a2d,     2,     1, 1252061492u,         0u, 4491,   2 },
	{   7, L2TP_MSG_ICRQ,   0xbca70a2d,     3,     1, 1252037939u,         0u, 4491,   2 },
	{   8, L2TP_MSG_ICRQ,   0xbca70a2d,     4,     1, 1252042838u,         0u, 4491,   2 },
	{   9, L2TP_MSG_ZLB,    0xcc1f7e41,     1,     2,         0u,         0u,    0,   0 },
	{  10, L2TP_MSG_ICRQ,   0xbca70a2d,     5,     1, 1252045897u,         0u, 4491,   2 },
	{  11, L2TP_MSG_ICRQ,   0xbca70a2d,     6,     1, 1252052833u,         0u, 4491,   2 },
	{  12, L2TP_MSG_ICRQ,   0xbca70a2d,     7,     1, 1252009459u,         0u, 4491,   2 },
	{  13, L2TP_MSG_ICRQ,   0xbca70a2d,     8,     1, 1252002846u,         0u, 4491,   2 },
	{  14, L2TP_MSG_ICRQ,   0xbca70a2d,     9,     1, 1252048857u,         0u, 4491,   2 },
	{  15, L2TP_MSG_ICRQ,   0xbca70a2d,    10,     1, 1252049439u,         0u, 4491,   2 },
	{  16, L2TP_MSG_ICRQ,   0xbca70a2d,    11,     1, 1252027992u,         0u, 4491,   2 },
	{  17, L2TP_MSG_ICRQ,   0xbca70a2d,    12,     1, 1252035907u,         0u, 4491,   2 },
	{  18, L2TP_MSG_ICRQ,   0xbca70a2d,    13,     1, 1252025232u,         0u, 4491,   2 },
	{  19, L2TP_MSG_ICRQ,   0xbca70a2d,    14,     1, 1252006892u,         0u, 4491,   2 },
	{  20, L2TP_MSG_ICRQ,   0xbca70a2d,    15,     1, 1252022075u,         0u, 4491,   2 },
	{  21, L2TP_MSG_ICRQ,   0xbca70a2d,    16,     1, 1252050500u,         0u, 4491,   2 },
	{  22, L2TP_MSG_ICRQ,   0xbca70a2d,    17,     1, 1252020477u,         0u, 4491,   2 },
	{  23, L2TP_MSG_ICRQ,   0xbca70a2d,    18,     1, 1252046929u,         0u, 4491,   2 },
	{  24, L2TP_MSG_ICRQ,   0xbca70a2d,    19,     1, 1252037232u,         0u, 4491,   2 },
	{  25, L2TP_MSG_ICRQ,   0xbca70a2d,    20,     1, 1252011941u,         0u, 4491,   2 },
	{  26, L2TP_MSG_ICRP,   0xcc1f7e41,     1,     4, 1074135108u, 1252061492u, 4491,   3 },
	{  27, L2TP_MSG_ICRQ,   0xbca70a2d,    21,     1, 1252017672u,         0u, 4491,   2 },
	{  28, L2TP_MSG_ICRP,   0xcc1f7e41,     2,     4, 1074200723u, 1252037939u, 4491,   3 },
	{  29, L2TP_MSG_ICRQ,   0xbca70a2d,    22,     1, 1252014011u,         0u, 4491,   2 },
	{  30, L2TP_MSG_ICRQ,   0xbca70a2d,    23,     1, 1252057932u,         0u, 4491,   2 },
	{  31, L2TP_MSG_ICRQ,   0xbca70a2d,    24,     1, 1252064174u,         0u, 4491,   2 },
	{  32, L2TP_MSG_ICRQ,   0xbca70a2d,    25,     1, 1252059717u,         0u, 4491,   2 },
	{  33, L2TP_MSG_ICCN,   0xbca70a2d,    26,     2, 1252061492u, 1074135108u, 4491, 107 },
	{  34, L2TP_MSG_ICRP,   0xcc1f7e41,     3,    17, 1074200948u, 1252042838u, 4491,   3 },
	{  35, L2TP_MSG_ICRP,   0xcc1f7e41,     4,    17, 1074200921u, 1252045897u, 4491,   3 },
	{  36, L2TP_MSG_ICRP,   0xcc1f7e41,     5,    17, 1074200639u, 1252052833u, 4491,   3 },
	{  37, L2TP_MSG_ICRP,   0xcc1f7e41,     6,    17, 1074135208u, 1252009459u, 4491,   3 },
	{  38, L2TP_MSG_ICRP,   0xcc1f7e41,     7,    17, 1074200668u, 1252002846u, 4491,   3 },
	{  39, L2TP_MSG_ICRP,   0xcc1f7e41,     8,    17, 1074135077u, 1252048857u, 4491,   3 },
	{  40, L2TP_MSG_ICRP,   0xcc1f7e41,     9,    17, 1074135179u, 1252049439u, 4491,   3 },
	{  41, L2TP_MSG_ICRP,   0xcc1f7e41,    10,    17, 1074135137u, 1252027992u, 4491,   3 },
	{  42, L2TP_MSG_ICRP,   0xcc1f7e41,    11,    17, 1074135343u, 1252035907u, 4491,   3 },
	{  43, L2TP_MSG_ICRP,   0xcc1f7e41,    12,    17, 1074135399u, 1252025232u, 4491,   3 },
	{  44, L2TP_MSG_ICRP,   0xcc1f7e41,    13,    17, 1074135042u, 1252006892u, 4491,   3 },
	{  45, L2TP_MSG_ICRP,   0xcc1f7e41,    14,    17, 1074200819u, 1252022075u, 4491,   3 },
	{  46, L2TP_MSG_ICRP,   0xcc1f7e41,    15,    17, 1074135267u, 1252050500u, 4491,   3 },
	{  47, L2TP_MSG_ZLB,    0xcc1f7e41,    16,    27,         0u,         0u,    0,   0 },
	{  48, L2TP_MSG_ICRP,   0xcc1f7e41,    16,    27, 1074200607u, 1252020477u, 4491,   3 },
	{  49, L2TP_MSG_ICRP,   0xcc1f7e41,    17,    27, 1074135364u, 1252046929u, 4491,   3 },
	{  50, L2TP_MSG_ICRP,   0xcc1f7e41,    18,    27, 1074135309u, 1252037232u, 4491,   3 },
	{  51, L2TP_MSG_ICRP,   0xcc1f7e41,    19,    27, 1074200765u, 1252011941u, 4491,   3 },
	{  52, L2TP_MSG_ICRP,   0xcc1f7e41,    20,    27, 1074200693u, 1252017672u, 4491,   3 },
	{  53, L2TP_MSG_ICRP,   0xcc1f7e41,    21,    27, 1074135245u, 1252014011u, 4491,   3 },
	{  54, L2TP_MSG_ICRP,   0xcc1f7e41,    22,    27, 1074200851u, 1252057932u, 4491,   3 },
	{  55, L2TP_MSG_ICRP,   0xcc1f7e41,    23,    27, 1074200890u, 1252064174u, 4491,   3 },
	{  56, L2TP_MSG_ICRP,   0xcc1f7e41,    24,    27, 1074200796u, 1252059717u, 4491,   3 },
	{  57, L2TP_MSG_ICCN,   0xbca70a2d,    27,    25, 1252037939u, 1074200723u, 4491, 107 },
	{  58, L2TP_MSG_ICCN,   0xbca70a2d,    28,    25, 1252042838u, 1074200948u, 4491, 107 },
	{  59, L2TP_MSG_ICCN,   0xbca70a2d,    29,    25, 1252045897u, 1074200921u, 4491, 107 },
	{  60, L2TP_MSG_ICCN,   0xbca70a2d,    30,    25, 1252052833u, 1074200639u, 4491, 107 },
	{  61, L2TP_MSG_ICCN,   0xbca70a2d,    31,    25, 1252009459u, 1074135208u, 4491, 107 },
	{  62, L2TP_MSG_ICCN,   0xbca70a2d,    32,    25, 1252002846u, 1074200668u, 4491, 107 },
	{  63, L2TP_MSG_ICCN,   0xbca70a2d,    33,    25, 1252048857u, 1074135077u, 4491, 107 },
	{  64, L2TP_MSG_ICCN,   0xbca70a2d,    34,    25, 1252049439u, 1074135179u, 4491, 107 },
	{  65, L2TP_MSG_ICCN,   0xbca70a2d,    35,    25, 1252027992u, 1074135137u, 4491, 107 },
	{  66, L2TP_MSG_ICCN,   0xbca70a2d,    36,    25, 1252035907u, 1074135343u, 4491, 107 },
	{  67, L2TP_MSG_ICCN,   0xbca70a2d,    37,    25, 1252025232u, 1074135399u, 4491, 107 },
	{  68, L2TP_MSG_ICCN,   0xbca70a2d,    38,    25, 1252006892u, 1074135042u, 4491, 107 },
	{  69, L2TP_MSG_ICCN,   0xbca70a2d,    39,    25, 1252022075u, 1074200819u, 4491, 107 },
	{  70, L2TP_MSG_ICCN,   0xbca70a2d,    40,    25, 1252050500u, 1074135267u, 4491, 107 },
	{  71, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    28,         0u,         0u,    0,   0 },
	{  72, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    29,         0u,         0u,    0,   0 },
	{  73, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    30,         0u,         0u,    0,   0 },
	{  74, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    31,         0u,         0u,    0,   0 },
	{  75, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    32,         0u,         0u,    0,   0 },
	{  76, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    33,         0u,         0u,    0,   0 },
	{  77, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    34,         0u,         0u,    0,   0 },
	{  78, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    35,         0u,         0u,    0,   0 },
	{  79, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    36,         0u,         0u,    0,   0 },
	{  80, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    37,         0u,         0u,    0,   0 },
	{  81, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    38,         0u,         0u,    0,   0 },
	{  82, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    39,         0u,         0u,    0,   0 },
	{  83, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    40,         0u,         0u,    0,   0 },
	{  84, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    41,         0u,         0u,    0,   0 },
	{  85, L2TP_MSG_ICCN,   0xbca70a2d,    41,    25, 1252020477u, 1074200607u, 4491, 107 },
	{  86, L2TP_MSG_ICCN,   0xbca70a2d,    42,    25, 1252046929u, 1074135364u, 4491, 107 },
	{  87, L2TP_MSG_ICCN,   0xbca70a2d,    43,    25, 1252037232u, 1074135309u, 4491, 107 },
	{  88, L2TP_MSG_ICCN,   0xbca70a2d,    44,    25, 1252011941u, 1074200765u, 4491, 107 },
	{  89, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    42,         0u,         0u,    0,   0 },
	{  90, L2TP_MSG_ICCN,   0xbca70a2d,    45,    25, 1252017672u, 1074200693u, 4491, 107 },
	{  91, L2TP_MSG_ICCN,   0xbca70a2d,    46,    25, 1252014011u, 1074135245u, 4491, 107 },
	{  92, L2TP_MSG_ICCN,   0xbca70a2d,    47,    25, 1252057932u, 1074200851u, 4491, 107 },
	{  93, L2TP_MSG_ICCN,   0xbca70a2d,    48,    25, 1252064174u, 1074200890u, 4491, 107 },
	{  94, L2TP_MSG_ICCN,   0xbca70a2d,    49,    25, 1252059717u, 1074200796u, 4491, 107 },
	{  95, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    43,         0u,         0u,    0,   0 },
	{  96, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    44,         0u,         0u,    0,   0 },
	{  97, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    45,         0u,         0u,    0,   0 },
	{  98, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    46,         0u,         0u,    0,   0 },
	{  99, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    47,         0u,         0u,    0,   0 },
	{ 100, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    48,         0u,         0u,    0,   0 },
	{ 101, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    49,         0u,         0u,    0,   0 },
	{ 102, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    50,         0u,         0u,    0,   0 },
	{ 103, L2TP_MSG_STOPCCN, 0x4fa07d3f,    39,    79,         0u,         0u,    0,   0 },
	{ 104, L2TP_MSG_HELLO,  0xbca70a2d,    50,    25,         0u,         0u,    0,   0 },
	{ 105, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    51,         0u,         0u,    0,   0 },
	{ 106, L2TP_MSG_HELLO,  0xbca70a2d,    51,    25,         0u,         0u,    0,   0 },
	{ 107, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    52,         0u,         0u,    0,   0 },
	{ 108, L2TP_MSG_HELLO,  0xbca70a2d,    52,    25,         0u,         0u,    0,   0 },
	{ 109, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    53,         0u,         0u,    0,   0 },
	{ 110, L2TP_MSG_HELLO,  0xbca70a2d,    53,    25,         0u,         0u,    0,   0 },
	{ 111, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    54,         0u,         0u,    0,   0 },
	{ 112, L2TP_MSG_HELLO,  0xbca70a2d,    54,    25,         0u,         0u,    0,   0 },
	{ 113, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    55,         0u,         0u,    0,   0 },
	{ 114, L2TP_MSG_HELLO,  0xbca70a2d,    55,    25,         0u,         0u,    0,   0 },
	{ 115, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    56,         0u,         0u,    0,   0 },
	{ 116, L2TP_MSG_HELLO,  0xbca70a2d,    56,    25,         0u,         0u,    0,   0 },
	{ 117, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    57,         0u,         0u,    0,   0 },
	{ 118, L2TP_MSG_HELLO,  0xbca70a2d,    57,    25,         0u,         0u,    0,   0 },
	{ 119, L2TP_MSG_ZLB,    0xcc1f7e41,    25,    58,         0u,         0u,    0,   0 },
	{ 120, L2TP_MSG_SLI,    0xcc1f7e41,    25,    58, 1074200765u, 1252011941u,    0,   0 },
	{ 121, L2TP_MSG_ZLB,    0xbca70a2d,    58,    26,         0u,         0u,    0,   0 },
};

/* One L2TP control packet found in the capture: the IP payload. */
struct frame {
	unsigned number;
	const uint8_t *p;
	size_t len;
};

static uint8_t *file_buf;
static struct frame frames[MAX_FRAMES];
static unsigned n_frames;

static uint32_t get32(const uint8_t *p, bool swap)
{
	return swap ? (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0]
		    : usl_get_be32(p);
}

/* Skips the link header; returns the IPv4 header or NULL. */
static const uint8_t *link_to_ip(uint32_t linktype, const uint8_t *p, size_t *len)
{
	size_t off = 0;
	uint16_t ethertype;

	if (linktype == LINKTYPE_RAW || linktype == LINKTYPE_IPV4)
		return p;
	if (linktype != LINKTYPE_ETHERNET || *len < 14)
		return NULL;
	ethertype = usl_get_be16(p + 12);
	off = 14;
	if (ethertype == ETH_P_8021Q && *len >= 18) {
		ethertype = usl_get_be16(p + 16);
		off = 18;
	}
	if (ethertype != ETH_P_IP)
		return NULL;
	*len -= off;
	return p + off;
}

/* IPv4, protocol 115, unfragmented: the L2TP payload (session ID first). */
static bool ip_to_l2tp(const uint8_t *ip, size_t len, struct frame *f)
{
	size_t ihl, tot;

	if (len < 20 || ip[0] >> 4 != 4 || ip[9] != IPPROTO_L2TP)
		return false;
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	tot = usl_get_be16(ip + 2);
	if (ihl < 20 || tot < ihl || tot > len || (usl_get_be16(ip + 6) & 0x3fff))
		return false;
	f->p = ip + ihl;
	f->len = tot - ihl;
	return true;
}

/* Reads a classic pcap file into frames[]; -1 with errno set when absent. */
static int load_pcap(const char *path)
{
	size_t size, off = 24, caplen, reclen;
	uint32_t magic, linktype;
	const uint8_t *ip;
	unsigned number = 0;
	bool swap;
	FILE *fp;
	long end;

	fp = fopen(path, "rb");
	if (fp == NULL)
		return -1;
	ck_assert_int_eq(fseek(fp, 0, SEEK_END), 0);
	end = ftell(fp);
	ck_assert_int_ge(end, 24);
	size = (size_t)end;
	rewind(fp);
	file_buf = malloc(size);
	ck_assert_ptr_nonnull(file_buf);
	ck_assert_uint_eq(fread(file_buf, 1, size, fp), size);
	fclose(fp);

	magic = usl_get_be32(file_buf);
	swap = magic != PCAP_MAGIC_US && magic != PCAP_MAGIC_NS;
	magic = get32(file_buf, swap);
	ck_assert_msg(magic == PCAP_MAGIC_US || magic == PCAP_MAGIC_NS, "not a classic pcap");
	linktype = get32(file_buf + 20, swap);
	ck_assert_msg(linktype == LINKTYPE_ETHERNET || linktype == LINKTYPE_RAW ||
		      linktype == LINKTYPE_IPV4, "unsupported link type %u", linktype);

	while (off + 16 <= size) {
		reclen = get32(file_buf + off + 8, swap);
		off += 16;
		ck_assert_msg(reclen <= size - off, "truncated record %u", number + 1);
		caplen = reclen;
		number++;
		ip = link_to_ip(linktype, file_buf + off, &caplen);
		if (ip && n_frames < MAX_FRAMES && ip_to_l2tp(ip, caplen, &frames[n_frames])) {
			frames[n_frames].number = number;
			n_frames++;
		}
		off += reclen;
	}
	return 0;
}

static void free_pcap(void)
{
	free(file_buf);
	file_buf = NULL;
	n_frames = 0;
}

START_TEST(test_capture_matches_tshark)
{
	const struct golden *g;
	struct l2tp_msg *m;
	enum l2tp_drop rc;
	unsigned i;

	ck_assert_int_eq(load_pcap(CAPTURE), 0);
	ck_assert_uint_eq(n_frames, sizeof(golden) / sizeof(golden[0]));
	m = malloc(sizeof(*m));
	ck_assert_ptr_nonnull(m);
	for (i = 0; i < n_frames; i++) {
		g = &golden[i];
		ck_assert_uint_eq(frames[i].number, g->frame);
		rc = l2tp_msg_decode(m, frames[i].p, frames[i].len, true, NULL);
		ck_assert_msg(rc == L2TP_DROP_NONE, "frame %u: %s", g->frame, l2tp_drop_name(rc));
		ck_assert_msg(m->type == g->type, "frame %u: type %s, want %s", g->frame,
			      l2tp_msg_type_name(m->type), l2tp_msg_type_name(g->type));
		ck_assert_uint_eq(m->ccid, g->ccid);
		ck_assert_uint_eq(m->ns, g->ns);
		ck_assert_uint_eq(m->nr, g->nr);
		ck_assert_uint_eq(m->ver, 3);
		if (g->local_sid)
			ck_assert_uint_eq(m->local_sid, g->local_sid);
		if (l2tp_msg_has(m, L2TP_AVP_REMOTE_SESSION_ID))
			ck_assert_uint_eq(m->remote_sid, g->remote_sid);
		ck_assert_msg(m->has_unknown_mandatory == (g->unk_vendor != 0),
			      "frame %u: unknown mandatory %d", g->frame, m->has_unknown_mandatory);
		if (g->unk_vendor) {
			ck_assert_uint_eq(m->unknown_mandatory_vendor, g->unk_vendor);
			ck_assert_uint_eq(m->unknown_mandatory_type, g->unk_type);
		}
	}
	free(m);
	free_pcap();
}
END_TEST

/* Frame 4, the SCCRP: v2-era AVPs with M=1 and Cisco vendor AVPs, all skipped. */
START_TEST(test_sccrp_details)
{
	struct l2tp_msg *m = malloc(sizeof(*m));

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(load_pcap(CAPTURE), 0);
	ck_assert_uint_eq(frames[3].number, 4);
	ck_assert_int_eq(l2tp_msg_decode(m, frames[3].p, frames[3].len, true, NULL), L2TP_DROP_NONE);
	ck_assert_uint_eq(m->type, L2TP_MSG_SCCRP);
	ck_assert_uint_eq(m->host_name.len, strlen("CST-RFGW10-C11"));
	ck_assert(memcmp(m->host_name.p, "CST-RFGW10-C11", m->host_name.len) == 0);
	ck_assert(memcmp(m->vendor_name.p, "Cisco Systems, Inc.", m->vendor_name.len) == 0);
	ck_assert_uint_eq(m->router_id, 67505409);
	ck_assert_uint_eq(m->assigned_ccid, 3165063725u);
	ck_assert_uint_eq(m->recv_window, 1024);
	ck_assert_uint_eq(m->firmware_rev, 0x1130);
	ck_assert_uint_eq(m->n_pw_caps, 1);
	ck_assert_uint_eq(m->pw_caps[0], 12);
	/* Protocol Version, Framing Capabilities, four Cisco AVPs */
	ck_assert_uint_eq(m->n_skipped, 6);
	ck_assert(!m->has_unknown_mandatory);

	/* frame 3, the StopCCN: result, error and message */
	ck_assert_int_eq(l2tp_msg_decode(m, frames[2].p, frames[2].len, true, NULL), L2TP_DROP_NONE);
	ck_assert_uint_eq(m->result.result, L2TP_STOPCCN_NORMAL);
	ck_assert(m->result.has_error);
	ck_assert_uint_eq(m->result.error, 0);
	ck_assert(memcmp(m->result.message.p, "Peer reset", m->result.message.len) == 0);
	free(m);
	free_pcap();
}
END_TEST

/* The ICRQ repeats PW Type with the same value: tolerated. */
START_TEST(test_icrq_repeats)
{
	struct l2tp_msg *m = malloc(sizeof(*m));

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(load_pcap(CAPTURE), 0);
	ck_assert_uint_eq(frames[5].number, 6);
	ck_assert_int_eq(l2tp_msg_decode(m, frames[5].p, frames[5].len, true, NULL), L2TP_DROP_NONE);
	ck_assert_uint_eq(m->type, L2TP_MSG_ICRQ);
	ck_assert_uint_eq(m->pw_type, 12);
	ck_assert_uint_eq(m->serial, 0x0e851459);
	ck_assert_uint_eq(m->l2ss, 3);
	ck_assert_uint_eq(m->data_seq, 2);
	ck_assert_uint_eq(m->circuit_status, L2TP_CIRCUIT_ACTIVE);
	ck_assert_uint_eq(m->remote_end_id.len, 2);
	ck_assert_uint_eq(m->tie_breaker, 0xfe57e07a501e1544ULL);
	free(m);
	free_pcap();
}
END_TEST

static Suite *capture_suite(void)
{
	Suite *s = suite_create("capture");
	TCase *tc = tcase_create("cisco-rfgw10");

	tcase_add_test(tc, test_capture_matches_tshark);
	tcase_add_test(tc, test_sccrp_details);
	tcase_add_test(tc, test_icrq_repeats);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	FILE *fp;
	int failed;

	fp = fopen(CAPTURE, "rb");
	if (fp == NULL) {
		printf("SKIP: %s: %s (tests/fixtures is incomplete)\n",
		       CAPTURE, strerror(errno));
		return SKIP_RC;
	}
	fclose(fp);
	sr = srunner_create(capture_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
