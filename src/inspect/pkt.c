/*
 * src/inspect/pkt.c - from a captured frame to an L2TPv3 payload: link
 * header (Ethernet with VLAN tags, Linux cooked v1/v2, raw IP, BSD
 * loopback), IPv4/IPv6 (extension headers skipped), UDP or IP protocol 115.
 *
 * Everything past the UDP header or the IP header is the codec's business.
 * Bounds: every read is checked against the captured length, and the IP
 * and UDP length fields are trusted only as far as the capture goes.
 */
#include <arpa/inet.h>
#include <pcap/dlt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "usl/buf.h"
#include "usl/hash.h"
#include "inspect.h"

#define ETH_HLEN		14
#define SLL_HLEN		16
#define SLL2_HLEN		20
#define ETH_P_IP		0x0800
#define ETH_P_IPV6		0x86dd
#define ETH_P_8021Q		0x8100
#define ETH_P_8021AD		0x88a8
#define ETH_P_QINQ		0x9100
#define IPPROTO_L2TPV3		115
#define UDP_HLEN		8
#define MAX_EXT_HDRS		16	/* a longer chain is not worth following */
#define FRAG_RING		64

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2		276
#endif

/* UDP endpoints seen carrying control messages: replies may come from any port (4.1.2.2). */
struct endpoint {
	struct usl_hnode node;
	struct insp_addr addr;
};

/* First fragments of UDP datagrams to an L2TP port, to recognise the rest. */
struct frag_id {
	struct insp_addr src, dst;
	uint32_t id;
};

static struct usl_hash endpoints;
static bool endpoints_ready;
static struct frag_id frags[FRAG_RING];
static unsigned n_frags;

/* One IP packet being taken apart. */
struct ipview {
	const uint8_t *p;	/* payload of the last IP header */
	size_t len;		/* captured payload bytes (bounded by the IP length) */
	bool cut;		/* the capture stopped before the IP length */
	uint8_t proto;
	bool frag, first_frag;
	uint32_t frag_id;
};

bool insp_pkt_linktype_ok(int dlt)
{
	switch (dlt) {
	case DLT_EN10MB:
	case DLT_LINUX_SLL:
	case DLT_LINUX_SLL2:
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
	case DLT_NULL:
	case DLT_LOOP:
		return true;
	default:
		return false;
	}
}

void insp_addr_str(const struct insp_addr *a, bool with_port, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	if (inet_ntop(a->family, a->a, ip, sizeof(ip)) == NULL)
		strcpy(ip, "?");
	if (!with_port || a->port == 0)
		snprintf(buf, len, "%s", ip);
	else if (a->family == AF_INET6)
		snprintf(buf, len, "[%s]:%u", ip, a->port);
	else
		snprintf(buf, len, "%s:%u", ip, a->port);
}

/* Same IP address, whatever the port: peers may answer from a new port. */
bool insp_addr_same_host(const struct insp_addr *x, const struct insp_addr *y)
{
	size_t n = x->family == AF_INET ? 4 : 16;

	return x->family == y->family && memcmp(x->a, y->a, n) == 0;
}

static bool addr_eq(const struct insp_addr *x, const struct insp_addr *y)
{
	return insp_addr_same_host(x, y) && x->port == y->port;
}

static uint32_t addr_hash(const struct insp_addr *a)
{
	return usl_hash_bytes(a->a, sizeof(a->a), (uint32_t)a->port << 8 | a->family);
}

static bool endpoint_eq(const struct usl_hnode *n, const void *key)
{
	return addr_eq(&usl_hash_entry(n, struct endpoint, node)->addr, key);
}

static bool endpoint_known(const struct insp_addr *a)
{
	return endpoints_ready && usl_hash_lookup(&endpoints, a, addr_hash(a)) != NULL;
}

static void endpoint_add(const struct insp_addr *a)
{
	struct endpoint *e;

	if (!endpoints_ready) {
		if (usl_hash_init(&endpoints, 64, endpoint_eq) < 0)
			return;
		endpoints_ready = true;
	}
	if (endpoint_known(a) || (e = calloc(1, sizeof(*e))) == NULL)
		return;
	e->addr = *a;
	usl_hash_insert(&endpoints, &e->node, addr_hash(a));
}

/* Called for every control message over UDP: both ends now speak L2TP. */
void insp_pkt_learn(const struct insp_pkt *pk)
{
	if (pk->over_ip)
		return;
	endpoint_add(&pk->src);
	endpoint_add(&pk->dst);
}

void insp_pkt_shutdown(void)
{
	struct usl_hnode *n;

	if (!endpoints_ready)
		return;
	while ((n = usl_hash_first(&endpoints)) != NULL) {
		usl_hash_remove(&endpoints, n);
		free(usl_hash_entry(n, struct endpoint, node));
	}
	usl_hash_destroy(&endpoints);
	endpoints_ready = false;
}

static bool frag_seen(const struct insp_pkt *pk, uint32_t id)
{
	unsigned i, n = n_frags < FRAG_RING ? n_frags : FRAG_RING;

	for (i = 0; i < n; i++)
		if (frags[i].id == id && insp_addr_same_host(&frags[i].src, &pk->src) &&
		    insp_addr_same_host(&frags[i].dst, &pk->dst))
			return true;
	return false;
}

static void frag_remember(const struct insp_pkt *pk, uint32_t id)
{
	struct frag_id *f = &frags[n_frags++ % FRAG_RING];

	f->src = pk->src;
	f->dst = pk->dst;
	f->id = id;
}

static void undecoded(struct insp_pkt *pk, const char *why)
{
	pk->kind = PKT_UNDECODED;
	pk->why = why;
}

static bool is_l2tp_port(const struct insp_pkt *pk, uint16_t port)
{
	return pk->src.port == port || pk->dst.port == port ||
	       endpoint_known(&pk->src) || endpoint_known(&pk->dst);
}

/* IP protocol 115: a zero Session ID marks a control message (4.1.1.2). */
static void l2tp_over_ip(const struct ipview *ip, struct insp_pkt *pk)
{
	pk->over_ip = true;
	if (ip->cut)
		return undecoded(pk, "truncated by the capture (snap length)");
	if (ip->len < L2TP_IP_SESSION0_LEN)
		return undecoded(pk, "IP protocol 115 payload shorter than a Session ID");
	pk->l2tp = ip->p;
	pk->len = ip->len;
	pk->kind = usl_get_be32(ip->p) == 0 ? PKT_CONTROL : PKT_DATA;
}

/*
 * A control header filling the UDP payload exactly (T, L, S set, Ver 3,
 * Length equal to the payload): how a connection on two ephemeral ports is
 * recognised when the capture missed its SCCRQ.
 */
static bool looks_like_control(const uint8_t *udp, size_t avail)
{
	size_t ulen = usl_get_be16(udp + 4);

	if (ulen < UDP_HLEN + L2TP_CTRL_HDR_LEN || ulen > avail)
		return false;
	return (usl_get_be16(udp + UDP_HLEN) & 0xc80f) == 0xc803 &&
	       usl_get_be16(udp + UDP_HLEN + 2) == ulen - UDP_HLEN;
}

/* UDP: the T bit of the first word marks control (4.1.2.1). */
static void l2tp_over_udp(const struct ipview *ip, const struct insp_opts *o,
			  struct insp_pkt *pk)
{
	size_t ulen;

	if (ip->len < UDP_HLEN)
		return;
	pk->src.port = usl_get_be16(ip->p);
	pk->dst.port = usl_get_be16(ip->p + 2);
	if (!is_l2tp_port(pk, o->udp_port) && !looks_like_control(ip->p, ip->len))
		return;
	ulen = usl_get_be16(ip->p + 4);
	pk->udp_csum_zero = usl_get_be16(ip->p + 6) == 0;
	if (ulen < UDP_HLEN)
		return undecoded(pk, "UDP length shorter than its header");
	if (ulen > ip->len)
		return undecoded(pk, ip->cut ? "truncated by the capture (snap length)"
					     : "UDP length past the IP packet");
	if (ulen < UDP_HLEN + 2)
		return undecoded(pk, "UDP payload too short for L2TP");
	pk->l2tp = ip->p + UDP_HLEN;
	pk->len = ulen - UDP_HLEN;
	pk->kind = (usl_get_be16(pk->l2tp) & L2TP_HDR_T) ? PKT_CONTROL : PKT_DATA;
}

/*
 * Fragments are not reassembled: say so for those that carry L2TP.  Only a
 * first UDP fragment has ports; later ones are matched by IP ID.
 */
static void fragment(const struct ipview *ip, const struct insp_opts *o, struct insp_pkt *pk)
{
	const char *why = pk->src.family == AF_INET ? "IPv4 fragment (not reassembled)"
						    : "IPv6 fragment (not reassembled)";

	if (ip->proto == IPPROTO_L2TPV3) {
		pk->over_ip = true;
		return undecoded(pk, why);
	}
	if (ip->proto != IPPROTO_UDP)
		return;
	if (ip->first_frag) {
		if (ip->len < UDP_HLEN)
			return;
		pk->src.port = usl_get_be16(ip->p);
		pk->dst.port = usl_get_be16(ip->p + 2);
		if (!is_l2tp_port(pk, o->udp_port))
			return;
		frag_remember(pk, ip->frag_id);
		return undecoded(pk, why);
	}
	if (frag_seen(pk, ip->frag_id))
		undecoded(pk, why);
}

static void transport(const struct ipview *ip, const struct insp_opts *o, struct insp_pkt *pk)
{
	if (ip->frag)
		fragment(ip, o, pk);
	else if (ip->proto == IPPROTO_L2TPV3)
		l2tp_over_ip(ip, pk);
	else if (ip->proto == IPPROTO_UDP)
		l2tp_over_udp(ip, o, pk);
}

static void ipv4(const uint8_t *p, size_t len, const struct insp_opts *o, struct insp_pkt *pk)
{
	struct ipview ip = { 0 };
	size_t ihl, tot;
	uint16_t fl;

	if (len < 20 || p[0] >> 4 != 4)
		return;
	ihl = (size_t)(p[0] & 0x0f) * 4;
	tot = usl_get_be16(p + 2);
	if (ihl < 20 || tot < ihl || len < ihl)
		return;
	ip.cut = tot > len;
	ip.p = p + ihl;
	ip.len = (ip.cut ? len : tot) - ihl;
	ip.proto = p[9];
	fl = usl_get_be16(p + 6);
	ip.frag = (fl & 0x3fff) != 0;		/* MF or a fragment offset */
	ip.first_frag = (fl & 0x1fff) == 0;
	ip.frag_id = usl_get_be16(p + 4);
	pk->src.family = pk->dst.family = AF_INET;
	memcpy(pk->src.a, p + 12, 4);
	memcpy(pk->dst.a, p + 16, 4);
	transport(&ip, o, pk);
}

/* Length of an IPv6 extension header at p, or 0 when next is not one we skip. */
static size_t ext_len(uint8_t next, const uint8_t *p, size_t len)
{
	if (len < 8)
		return 0;
	switch (next) {
	case 0:		/* hop-by-hop */
	case 43:	/* routing */
	case 60:	/* destination options */
	case 135:	/* mobility */
	case 139:	/* HIP */
	case 140:	/* shim6 */
		return ((size_t)p[1] + 1) * 8;
	case 51:	/* AH */
		return ((size_t)p[1] + 2) * 4;
	case 44:	/* fragment */
		return 8;
	default:
		return 0;
	}
}

static void ipv6(const uint8_t *p, size_t len, const struct insp_opts *o, struct insp_pkt *pk)
{
	struct ipview ip = { 0 };
	size_t plen, n;
	unsigned i;
	uint16_t off;

	if (len < 40 || p[0] >> 4 != 6)
		return;
	plen = usl_get_be16(p + 4);
	pk->src.family = pk->dst.family = AF_INET6;
	memcpy(pk->src.a, p + 8, 16);
	memcpy(pk->dst.a, p + 24, 16);
	ip.cut = 40 + plen > len;
	ip.p = p + 40;
	ip.len = ip.cut ? len - 40 : plen;
	ip.proto = p[6];
	for (i = 0; i < MAX_EXT_HDRS; i++) {
		n = ext_len(ip.proto, ip.p, ip.len);
		if (n == 0)
			break;
		if (n > ip.len)
			return;
		if (ip.proto == 44) {
			off = usl_get_be16(ip.p + 2);
			/* an atomic fragment (offset 0, no M) is a whole packet */
			ip.frag = ip.frag || (off & 0xfff9) != 0;
			ip.first_frag = (off & 0xfff8) == 0;
			ip.frag_id = usl_get_be32(ip.p + 4);
		}
		ip.proto = ip.p[0];
		ip.p += n;
		ip.len -= n;
	}
	transport(&ip, o, pk);
}

static void network(uint16_t ethertype, const uint8_t *p, size_t len,
		    const struct insp_opts *o, struct insp_pkt *pk)
{
	if (ethertype == ETH_P_IP)
		ipv4(p, len, o, pk);
	else if (ethertype == ETH_P_IPV6)
		ipv6(p, len, o, pk);
}

/* The network layer after ethertype et, 802.1Q/802.1ad tags skipped. */
static void vlan_and_up(uint16_t et, const uint8_t *p, size_t len, const struct insp_opts *o,
			struct insp_pkt *pk)
{
	while ((et == ETH_P_8021Q || et == ETH_P_8021AD || et == ETH_P_QINQ) && len >= 4) {
		et = usl_get_be16(p + 2);
		p += 4;
		len -= 4;
	}
	network(et, p, len, o, pk);
}

/* Raw IP: the version nibble tells which. */
static void raw_ip(const uint8_t *p, size_t len, const struct insp_opts *o, struct insp_pkt *pk)
{
	if (len < 1)
		return;
	network(p[0] >> 4 == 6 ? ETH_P_IPV6 : ETH_P_IP, p, len, o, pk);
}

/* BSD loopback: a 4-octet address family, in the byte order of whoever captured. */
static void null_link(const uint8_t *p, size_t len, const struct insp_opts *o,
		      struct insp_pkt *pk)
{
	uint32_t be, le;

	if (len < 4)
		return;
	be = usl_get_be32(p);
	le = (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
	if (be == 2 || le == 2)
		ipv4(p + 4, len - 4, o, pk);
	/* AF_INET6: Linux 10, NetBSD/OpenBSD 24, FreeBSD 28, Darwin 30 */
	else if (be == 10 || be == 24 || be == 28 || be == 30 ||
		 le == 10 || le == 24 || le == 28 || le == 30)
		ipv6(p + 4, len - 4, o, pk);
}

void insp_pkt_parse(int dlt, const uint8_t *p, size_t caplen, const struct insp_opts *o,
		    struct insp_pkt *pk)
{
	pk->kind = PKT_OTHER;
	memset(&pk->src, 0, sizeof(pk->src));
	memset(&pk->dst, 0, sizeof(pk->dst));
	pk->over_ip = pk->udp_csum_zero = false;
	pk->l2tp = NULL;
	pk->len = 0;
	pk->why = NULL;
	switch (dlt) {
	case DLT_EN10MB:
		if (caplen >= ETH_HLEN)
			vlan_and_up(usl_get_be16(p + 12), p + ETH_HLEN, caplen - ETH_HLEN, o, pk);
		break;
	case DLT_LINUX_SLL:
		if (caplen >= SLL_HLEN)
			vlan_and_up(usl_get_be16(p + 14), p + SLL_HLEN, caplen - SLL_HLEN, o, pk);
		break;
	case DLT_LINUX_SLL2:
		if (caplen >= SLL2_HLEN)
			vlan_and_up(usl_get_be16(p), p + SLL2_HLEN, caplen - SLL2_HLEN, o, pk);
		break;
	case DLT_RAW:
		raw_ip(p, caplen, o, pk);
		break;
	case DLT_IPV4:
		ipv4(p, caplen, o, pk);
		break;
	case DLT_IPV6:
		ipv6(p, caplen, o, pk);
		break;
	case DLT_NULL:
	case DLT_LOOP:
		null_link(p, caplen, o, pk);
		break;
	}
}
