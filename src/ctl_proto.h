/*
 * src/ctl_proto.h - the control socket protocol, shared by l2tpv3d (ctl.c)
 * and l2tpv3ctl.  See doc/ctl-protocol.md for the JSON shapes.
 *
 * One JSON object per line each way.  Every request gets exactly one final
 * reply carrying its id and a status from enum ctl_status ("monitor" is the
 * exception: it streams events until the client disconnects).
 */
#ifndef L2TPD_CTL_PROTO_H
#define L2TPD_CTL_PROTO_H

#define CTL_DEFAULT_SOCKET	RUNSTATEDIR "/l2tpv3d/l2tpv3d.ctl"
#define CTL_MAX_LINE		65536	/* longest request line the daemon reads */

enum ctl_status {
	CTL_OK = 0,
	CTL_E_INVALID,		/* bad request: unknown command, missing or bad argument */
	CTL_E_NOT_FOUND,	/* no such tunnel/session/profile */
	CTL_E_EXISTS,		/* name or object already exists */
	CTL_E_LIMIT,		/* a configured limit refuses it */
	CTL_E_PEER,		/* the peer refused or closed it: data.result says why */
	CTL_E_TIMEOUT,		/* the peer did not answer */
	CTL_E_DATAPLANE,	/* the kernel refused it (protocol state rolled back) */
	CTL_E_CONFIG,		/* reload: the new config is invalid (old one kept) */
	CTL_E_SHUTTING_DOWN,
	CTL_E_INTERNAL,
	CTL_STATUS__COUNT
};

static inline const char *ctl_status_name(int s)
{
	static const char *const names[CTL_STATUS__COUNT] = {
		"ok", "invalid-argument", "not-found", "exists", "limit",
		"peer-refused", "timeout", "dataplane-error", "config-error",
		"shutting-down", "internal-error",
	};
	return (s >= 0 && s < CTL_STATUS__COUNT) ? names[s] : "unknown";
}

/*
 * A reply that is its status alone (every success of a quiet request), as
 * the daemon writes it; the CLI reads lines of exactly this form without
 * a JSON parser.  Arguments: id (long long), status (int), its name.
 */
#define CTL_STATUS_LINE_FMT	"{\"id\":%lld,\"status\":%d,\"status_name\":\"%s\"}"
#define CTL_STATUS_LINE_MAX	96	/* its longest, NUL included */

/* n in decimal at o; returns the end. */
static inline char *ctl_put_decimal(char *o, long long n)
{
	unsigned long long m = n < 0 ? 0ULL - (unsigned long long)n : (unsigned long long)n;
	char tmp[20];
	int k = 0;

	if (n < 0)
		*o++ = '-';
	do {
		tmp[k++] = (char)('0' + m % 10);
		m /= 10;
	} while (m != 0);
	while (k > 0)
		*o++ = tmp[--k];
	return o;
}

static inline char *ctl_put_text(char *o, const char *s)
{
	while (*s != '\0')
		*o++ = *s++;
	return o;
}

/*
 * CTL_STATUS_LINE_FMT's line written by hand into buf (CTL_STATUS_LINE_MAX
 * bytes), NUL-terminated; returns its length.  A batch writes and reads
 * thousands, and snprintf() cost ten times as much.
 */
static inline size_t ctl_status_line(char *buf, long long id, int st)
{
	char *o = buf;

	o = ctl_put_text(o, "{\"id\":");
	o = ctl_put_decimal(o, id);
	o = ctl_put_text(o, ",\"status\":");
	o = ctl_put_decimal(o, st);
	o = ctl_put_text(o, ",\"status_name\":\"");
	o = ctl_put_text(o, ctl_status_name(st));
	o = ctl_put_text(o, "\"}");
	*o = '\0';
	return (size_t)(o - buf);
}

#endif
