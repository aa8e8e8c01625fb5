/*
 * src/profile.h - shared, reference-counted copies of tunnel and session
 * profiles.
 *
 * Every tunnel and session keeps the profile it was made with (a reload
 * must not change a live object behind its back), but 10,000 tunnels of
 * one profile need one copy, not 10,000: profiles are interned by value.
 * The number of distinct profiles is small and independent of the number
 * of tunnels.
 */
#ifndef L2TPD_PROFILE_H
#define L2TPD_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include "config.h"

/* Field by field: struct padding makes memcmp() of copies unreliable. */
bool tunnel_profile_eq(const struct tunnel_profile *a, const struct tunnel_profile *b);
bool session_profile_eq(const struct session_profile *a, const struct session_profile *b);

/*
 * Reload: the first setting that differs between a and b and needs a new
 * connection (the encapsulation, ports, advertised window, authentication),
 * or NULL when a live connection can take b; the settings that differ and
 * can, as "hello_interval, max_retries" (the file's names) in buf.
 */
const char *tunnel_profile_restart_field(const struct tunnel_profile *a,
					 const struct tunnel_profile *b);
void tunnel_profile_live_changes(const struct tunnel_profile *a, const struct tunnel_profile *b,
				 char *buf, size_t len);

/* A shared copy equal to p (one more reference), or NULL on ENOMEM. */
const struct tunnel_profile *tunnel_profile_get(const struct tunnel_profile *p);
void tunnel_profile_put(const struct tunnel_profile *p);
const struct session_profile *session_profile_get(const struct session_profile *p);
void session_profile_put(const struct session_profile *p);

#endif
