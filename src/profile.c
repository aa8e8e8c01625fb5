/*
 * src/profile.c - interned profiles (see profile.h).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "usl/hash.h"

/* One shared profile: the hash node, its users, and the copy itself. */
struct prof_box {
	struct usl_hnode hnode;
	struct usl_hash *table;
	unsigned refs;
	_Alignas(max_align_t) unsigned char p[];
};

static struct usl_hash tprofs, sprofs;

const char *tunnel_profile_restart_field(const struct tunnel_profile *a,
					 const struct tunnel_profile *b)
{
	if (a->encap != b->encap)
		return "encap";
	if (a->udp_src_port != b->udp_src_port)
		return "udp_src_port";
	if (a->udp_port != b->udp_port)
		return "udp_port";
	if (a->rx_window != b->rx_window)
		return "rx_window";	/* advertised in our SCCRQ/SCCRP: 4.2 */
	if (a->digest != b->digest)
		return "digest";
	if (strcmp(a->secret, b->secret) != 0)
		return "secret";
	if (a->hide_avps != b->hide_avps)
		return "hide_avps";
	if (strcmp(a->bind_device, b->bind_device) != 0)
		return "bind_device";	/* the socket's bind and route: a new connection */
	if (a->failover != b->failover || a->recovery_time_ms != b->recovery_time_ms)
		return "failover";	/* advertised in our SCCRQ/SCCRP (RFC 4951) */
	return NULL;
}

void tunnel_profile_live_changes(const struct tunnel_profile *a, const struct tunnel_profile *b,
				 char *buf, size_t len)
{
	static const struct {
		const char *name;
		size_t off;
		size_t size;
	} live[] = {
#define LIVE(f) { #f, offsetof(struct tunnel_profile, f), sizeof(((struct tunnel_profile *)0)->f) }
		LIVE(hello_interval_ms), LIVE(setup_timeout_ms), LIVE(session_setup_timeout_ms),
		LIVE(retransmit_initial_ms), LIVE(retransmit_cap_ms), LIVE(max_retries),
		LIVE(sccrq_max_retries), LIVE(sccrp_max_retries), LIVE(delayed_ack_ms),
		LIVE(send_window), LIVE(send_ack_msg), LIVE(max_sessions),
		/* set on the socket again (transport_tunnel_reapply) */
		LIVE(dscp), LIVE(ttl), LIVE(df),
#undef LIVE
	};
	size_t used = 0;

	buf[0] = '\0';
	if (strcmp(a->name, b->name) != 0)
		used += (size_t)snprintf(buf, len, "profile");
	for (size_t i = 0; i < sizeof(live) / sizeof(live[0]) && used < len; i++) {
		const char *n = live[i].name;
		size_t nl = strlen(n);

		if (memcmp((const char *)a + live[i].off, (const char *)b + live[i].off,
			   live[i].size) == 0)
			continue;
		/* the file's names: hello_interval, not hello_interval_ms */
		if (nl > 3 && strcmp(n + nl - 3, "_ms") == 0)
			nl -= 3;
		used += (size_t)snprintf(buf + used, len - used, "%s%.*s", used ? ", " : "",
					 (int)nl, n);
	}
}

bool tunnel_profile_eq(const struct tunnel_profile *a, const struct tunnel_profile *b)
{
	return !strcmp(a->name, b->name) && a->encap == b->encap &&
	       a->udp_src_port == b->udp_src_port && a->udp_port == b->udp_port &&
	       a->hello_interval_ms == b->hello_interval_ms &&
	       a->setup_timeout_ms == b->setup_timeout_ms &&
	       a->session_setup_timeout_ms == b->session_setup_timeout_ms &&
	       a->retransmit_initial_ms == b->retransmit_initial_ms &&
	       a->retransmit_cap_ms == b->retransmit_cap_ms && a->max_retries == b->max_retries &&
	       a->sccrq_max_retries == b->sccrq_max_retries && a->delayed_ack_ms == b->delayed_ack_ms &&
	       a->sccrp_max_retries == b->sccrp_max_retries &&
	       a->rx_window == b->rx_window && a->send_window == b->send_window &&
	       a->digest == b->digest &&
	       !strcmp(a->secret, b->secret) && a->hide_avps == b->hide_avps &&
	       a->send_ack_msg == b->send_ack_msg && a->max_sessions == b->max_sessions &&
	       a->dscp == b->dscp && a->ttl == b->ttl && a->df == b->df &&
	       !strcmp(a->bind_device, b->bind_device) && a->failover == b->failover &&
	       a->recovery_time_ms == b->recovery_time_ms;
}

bool session_profile_eq(const struct session_profile *a, const struct session_profile *b)
{
	return !strcmp(a->name, b->name) && a->pw_type == b->pw_type &&
	       a->cookie_len == b->cookie_len && a->l2spec == b->l2spec &&
	       a->data_seq == b->data_seq && !strcmp(a->ifname, b->ifname) && a->mtu == b->mtu &&
	       !strcmp(a->bridge, b->bridge) && !strcmp(a->address, b->address) &&
	       a->vlan_id == b->vlan_id && !strcmp(a->pppd_options, b->pppd_options);
}

static bool tbox_eq(const struct usl_hnode *n, const void *key)
{
	return tunnel_profile_eq((const void *)usl_hash_entry(n, struct prof_box, hnode)->p, key);
}

static bool sbox_eq(const struct usl_hnode *n, const void *key)
{
	return session_profile_eq((const void *)usl_hash_entry(n, struct prof_box, hnode)->p, key);
}

/*
 * The shared copy of p in table (one more reference).  Variants of one
 * profile (CLI overrides) share a name, so the name hash gives short chains.
 */
static const void *intern(struct usl_hash *table, usl_hash_eq_fn eq, const void *p,
			  size_t size, const char *name)
{
	uint32_t h = usl_hash_bytes(name, strlen(name), 0);
	struct usl_hnode *n;
	struct prof_box *b;

	if (table->buckets == NULL && usl_hash_init(table, 8, eq) < 0)
		return NULL;
	n = usl_hash_lookup(table, p, h);
	if (n != NULL) {
		b = usl_hash_entry(n, struct prof_box, hnode);
		b->refs++;
		return b->p;
	}
	b = calloc(1, sizeof(*b) + size);
	if (b == NULL)
		return NULL;
	memcpy(b->p, p, size);
	b->table = table;
	b->refs = 1;
	usl_hash_insert(table, &b->hnode, h);
	return b->p;
}

static void release(const void *p)
{
	struct prof_box *b;

	if (p == NULL)
		return;
	b = usl_container_of(p, struct prof_box, p);
	if (--b->refs > 0)
		return;
	usl_hash_remove(b->table, &b->hnode);
	if (usl_hash_count(b->table) == 0)
		usl_hash_destroy(b->table);	/* leaves buckets NULL: re-initialised on use */
	free(b);
}

const struct tunnel_profile *tunnel_profile_get(const struct tunnel_profile *p)
{
	return intern(&tprofs, tbox_eq, p, sizeof(*p), p->name);
}

void tunnel_profile_put(const struct tunnel_profile *p)
{
	release(p);
}

const struct session_profile *session_profile_get(const struct session_profile *p)
{
	return intern(&sprofs, sbox_eq, p, sizeof(*p), p->name);
}

void session_profile_put(const struct session_profile *p)
{
	release(p);
}
