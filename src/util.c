/*
 * src/util.c - small helpers: random IDs, socket address formatting and
 * hashing, router id.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "l2tpv3d.h"
#include "usl/log.h"

/*
 * IDs (CCIDs, Session IDs), cookies, tie breakers and the connections'
 * seeds must be unguessable: a peer that learns some of them must not be
 * able to predict those handed to another peer.  They come from the kernel
 * CSPRNG, drawn into a pool so that bringing up a pseudowire, which takes
 * five or six draws, costs a getrandom() call per ~50 pseudowires, not six.
 * Every byte is handed out once and wiped from the pool as it goes.
 */
#define RANDOM_POOL	512
static uint8_t random_pool[RANDOM_POOL];
static size_t random_pool_left;

static void getrandom_all(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fatal("getrandom");
		}
		p += n;
		len -= (size_t)n;
	}
}

void random_bytes(void *buf, size_t len)
{
	uint8_t *from;

	if (len > RANDOM_POOL / 4) {
		getrandom_all(buf, len);
		return;
	}
	if (random_pool_left < len) {
		getrandom_all(random_pool, RANDOM_POOL);
		random_pool_left = RANDOM_POOL;
	}
	random_pool_left -= len;
	from = random_pool + random_pool_left;
	memcpy(buf, from, len);
	memset(from, 0, len);
}

uint32_t random_u32_nonzero(void)
{
	uint32_t v;

	do
		random_bytes(&v, sizeof(v));
	while (v == 0);
	return v;
}

socklen_t sockaddr_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					 : sizeof(struct sockaddr_in);
}

uint16_t sockaddr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return ntohs(((const struct sockaddr_in *)sa)->sin_port);
}

void sockaddr_set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)sa)->sin_port = htons(port);
}

static const void *sockaddr_addr(const struct sockaddr *sa, size_t *len)
{
	if (sa->sa_family == AF_INET6) {
		*len = 16;
		return &((const struct sockaddr_in6 *)sa)->sin6_addr;
	}
	*len = 4;
	return &((const struct sockaddr_in *)sa)->sin_addr;
}

bool sockaddr_eq_addr(const struct sockaddr *a, const struct sockaddr *b)
{
	size_t la, lb;
	const void *pa, *pb;

	if (a->sa_family != b->sa_family)
		return false;
	pa = sockaddr_addr(a, &la);
	pb = sockaddr_addr(b, &lb);
	return memcmp(pa, pb, la) == 0;
}

/* The exact endpoint: address and port (a retransmitted SCCRQ comes from both). */
bool sockaddr_eq_full(const struct sockaddr *a, const struct sockaddr *b)
{
	return sockaddr_eq_addr(a, b) && sockaddr_port(a) == sockaddr_port(b);
}

uint32_t sockaddr_hash_addr(const struct sockaddr *sa)
{
	size_t len;
	const void *p = sockaddr_addr(sa, &len);

	return usl_hash_bytes(p, len, sa->sa_family);
}

int sockaddr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	size_t alen;
	const void *p = sockaddr_addr(sa, &alen);

	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return snprintf(buf, len, "-");
	inet_ntop(sa->sa_family, p, a, sizeof(a));
	if (sa->sa_family == AF_INET6)
		return snprintf(buf, len, "[%s]:%u", a, sockaddr_port(sa));
	return snprintf(buf, len, "%s:%u", a, sockaddr_port(sa));
}

const char *sockaddr_ntop(const struct sockaddr *sa)
{
	static char buf[INET6_ADDRSTRLEN];
	size_t alen;
	const void *p;

	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return "-";
	p = sockaddr_addr(sa, &alen);
	return inet_ntop(sa->sa_family, p, buf, sizeof(buf));
}

const char *router_id_str(uint32_t id)
{
	static char buf[16];

	snprintf(buf, sizeof(buf), "%u.%u.%u.%u", id >> 24, (id >> 16) & 0xff,
		 (id >> 8) & 0xff, id & 0xff);
	return buf;
}

/*
 * The Router ID identifies this LCCE (RFC 3931 5.4.3); it need not be an
 * address, but the first IPv4 address of a non-loopback interface is the
 * conventional, stable choice (as other LCCEs do).  A configured listen
 * address wins, since that is what the peers see.
 */
uint32_t router_id_derive(const struct l2tpd_config *c)
{
	struct ifaddrs *ifa, *i;
	uint32_t id = 0;

	for (unsigned n = 0; n < c->n_listen; n++) {
		const struct sockaddr_in *sin = (const void *)&c->listen[n].ss;
		if (sin->sin_family == AF_INET && sin->sin_addr.s_addr != 0)
			return ntohl(sin->sin_addr.s_addr);
	}
	if (getifaddrs(&ifa) < 0)
		return 0;
	for (i = ifa; i != NULL && id == 0; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		id = ntohl(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
	}
	freeifaddrs(ifa);
	return id;
}

const char *origin_name(enum origin o)
{
	switch (o) {
	case ORIGIN_CLI:	return "cli";
	case ORIGIN_CONFIG:	return "config";
	case ORIGIN_PEER:	return "peer";
	}
	return "?";
}

void json_add_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

void text_vset(char **text, const char *fmt, va_list ap)
{
	free(*text);
	if (vasprintf(text, fmt, ap) < 0)
		*text = NULL;
}

void text_set(char **text, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	text_vset(text, fmt, ap);
	va_end(ap);
}

/*
 * Formatted by hand, not with snprintf: the LNS derives a name or two for
 * every tunnel and session a peer brings up, and snprintf cost a tenth of
 * its instructions per pseudowire.
 */
bool name_derive(char *out, size_t len, const char *scope, const uint8_t *word, size_t wlen,
		 unsigned n)
{
	size_t k = strnlen(scope, 24), used;
	char digits[12];
	size_t nd = 0;

	/* the scope, '/', at least one of the peer's words and the NUL */
	if (wlen == 0 || len < k + 3)
		return false;
	memcpy(out, scope, k);
	out[k] = '/';
	used = k + 1;
	/* the peer's words: only what a configured name may hold, at most 40 of them */
	for (size_t i = 0; i < wlen && i < 40 && used + 1 < len; i++) {
		unsigned char ch = word[i];

		out[used++] = isalnum(ch) || strchr("-_.@", ch) ? (char)ch : '_';
	}
	if (n > 1) {
		for (unsigned v = n; v != 0; v /= 10)
			digits[nd++] = (char)('0' + v % 10);
		if (used + 1 + nd >= len)
			return false;
		out[used++] = ':';
		while (nd > 0)
			out[used++] = digits[--nd];
	}
	out[used] = '\0';
	return true;
}

void text_copy(char **text, const char *s)
{
	free(*text);
	*text = s != NULL && s[0] != '\0' ? strdup(s) : NULL;
}

void json_add_int(json_object *o, const char *k, int64_t v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

int ifname_expand(const char *pattern, unsigned n, char *out, size_t outlen)
{
	const char *pct = strstr(pattern, "%d");
	int len;

	if (pct == NULL)
		len = snprintf(out, outlen, "%s", pattern);
	else
		len = snprintf(out, outlen, "%.*s%u%s", (int)(pct - pattern), pattern, n, pct + 2);
	return len < 0 || (size_t)len >= outlen ? -1 : 0;
}

int path_trusted(const char *what, const char *path, char *why, size_t len)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return 0;
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(why, len, "%s %s is owned by uid %u, neither root nor l2tpv3d's (uid %u): "
			 "whoever owns it controls the daemon", what, path, (unsigned)st.st_uid,
			 (unsigned)geteuid());
		return -1;
	}
	if (st.st_mode & S_IWOTH) {
		snprintf(why, len, "%s %s is writable by every user (mode %04o): chmod o-w it",
			 what, path, (unsigned)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}

/* "ADDR:PORT" or "[ADDR6]:PORT" (numeric) into sa; -1 when it is not one. */
int sockaddr_parse_host_port(const char *s, union saddr *sa, socklen_t *salen)
{
	const char *colon = strrchr(s, ':');
	char host[INET6_ADDRSTRLEN + 2];
	size_t n;
	char *end;
	unsigned long p;

	if (colon == NULL || colon == s)
		return -1;
	p = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || p == 0 || p > 65535)
		return -1;
	n = (size_t)(colon - s);
	if (s[0] == '[' && n >= 2 && s[n - 1] == ']') {
		s++;
		n -= 2;
	}
	if (n == 0 || n >= sizeof(host))
		return -1;
	memcpy(host, s, n);
	host[n] = '\0';
	memset(sa, 0, sizeof(*sa));
	if (inet_pton(AF_INET, host, &sa->in4.sin_addr) == 1) {
		sa->in4.sin_family = AF_INET;
		sa->in4.sin_port = htons((uint16_t)p);
		*salen = sizeof(sa->in4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &sa->in6.sin6_addr) == 1) {
		sa->in6.sin6_family = AF_INET6;
		sa->in6.sin6_port = htons((uint16_t)p);
		*salen = sizeof(sa->in6);
		return 0;
	}
	return -1;
}

int fd_read_whole(int fd, size_t min, size_t max, uint8_t **out, size_t *len)
{
	struct stat st;
	uint8_t *p;
	size_t done = 0;
	ssize_t k;

	if (fstat(fd, &st) < 0 || (size_t)st.st_size < min || (size_t)st.st_size > max)
		return -1;
	p = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (p == NULL)
		return -1;
	while (done < (size_t)st.st_size) {
		k = pread(fd, p + done, (size_t)st.st_size - done, (off_t)done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			free(p);
			return -1;
		}
		done += (size_t)k;
	}
	*out = p;
	*len = done;
	return 0;
}

int file_write_whole(const char *path, const void *p, size_t len)
{
	char tmp[PATH_MAX + 8];
	size_t done = 0;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (done < len) {
		ssize_t n = write(fd, (const uint8_t *)p + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			unlink(tmp);
			return -1;
		}
		done += (size_t)n;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}
