/*
 * src/config_carry.c - a configuration as text that stands on its own: what
 * a restart hands to the next process, which runs it when it refuses the
 * file (doc/restart.md).
 *
 * config_print() writes every setting with the value in effect, include_dir's
 * files merged; read back, it makes the same configuration.  Two things it
 * leaves out of -nv output are put in here: every secret, and the content of
 * each secret_file in place of its path (the file may be gone or changed by
 * the time the text is read, and the next process must not depend on it).
 * Only the public interface of config.c is used.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"

char *config_carry_text(const struct l2tpd_config *c, size_t *len)
{
	struct l2tpd_config copy = *c;
	struct tunnel_profile *tp = NULL;
	struct peer_profile *pp = NULL;
	char *text = NULL;
	FILE *f;

	*len = 0;
	/* the secrets a file gave: in the text, the file's path not (a secret_file beside a secret is refused) */
	if (c->n_tunnel_profiles > 0 &&
	    (tp = malloc(c->n_tunnel_profiles * sizeof(*tp))) == NULL)
		return NULL;
	if (c->n_peers > 0 && (pp = malloc(c->n_peers * sizeof(*pp))) == NULL) {
		free(tp);
		return NULL;
	}
	for (unsigned i = 0; i < c->n_tunnel_profiles; i++) {
		tp[i] = c->tunnel_profiles[i];
		tp[i].secret_file[0] = '\0';
	}
	for (unsigned i = 0; i < c->n_peers; i++) {
		pp[i] = c->peers[i];
		pp[i].secret_file[0] = '\0';
	}
	copy.tunnel_profiles = tp;
	copy.peers = pp;
	copy.secret_file[0] = '\0';
	copy.peer_default.secret_file[0] = '\0';
	f = open_memstream(&text, len);
	if (f != NULL) {
		config_print_secrets(true);
		config_print(&copy, f);
		config_print_secrets(false);
		if (fclose(f) != 0) {
			free(text);
			text = NULL;
			*len = 0;
		}
	}
	/* the copies hold secrets: gone with them */
	if (tp != NULL)
		explicit_bzero(tp, c->n_tunnel_profiles * sizeof(*tp));
	if (pp != NULL)
		explicit_bzero(pp, c->n_peers * sizeof(*pp));
	explicit_bzero(&copy, sizeof(copy));
	free(tp);
	free(pp);
	return text;
}

struct l2tpd_config *config_load_text(const char *text, size_t len, const char *name,
				      char *err, size_t errlen)
{
	struct l2tpd_config *c = NULL;
	char path[64];
	size_t done = 0;
	int fd;

	fd = memfd_create("l2tpv3d-config", MFD_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		return NULL;
	}
	while (done < len) {
		ssize_t k = write(fd, text + done, len - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			snprintf(err, errlen, "writing the configuration: %s",
				 k < 0 ? strerror(errno) : "short write");
			close(fd);
			return NULL;
		}
		done += (size_t)k;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	c = config_load(path, err, errlen);
	close(fd);
	if (c != NULL && name != NULL)
		snprintf(c->path, sizeof(c->path), "%s", name);
	return c;
}
