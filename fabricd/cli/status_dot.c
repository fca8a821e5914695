// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cli/status_dot.c - the status as a Graphviz graph. A node sees its own
 * links only: those are coloured by what it measured, the links between
 * other nodes are drawn dashed and grey ("not seen from here").
 */
#define _GNU_SOURCE /* posix_spawn_file_actions_addclosefrom_np */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "cli/status_dot.h"

#define HANDSHAKE_EXPIRED_S 180 /* WireGuard's reject-after-time: the session is gone */

extern char **environ;

enum health { H_UNKNOWN, H_OK, H_WARN, H_BAD };
static const char *const colours[] = {"gray50", "forestgreen", "darkorange", "red3"};

static enum health worse(enum health a, enum health b)
{
	return a > b ? a : b;
}

/* The peer entry of `name` in status.fabric.peers, or NULL. */
static json_t *find_peer(json_t *status, const char *name)
{
	json_t *peer;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(status, "fabric"), "peers"), i, peer)
	{
		if (!strcmp(json_string_value(json_object_get(peer, "node")) ?: "", name))
			return peer;
	}
	return NULL;
}

static enum health handshake(json_t *peer, char *label, size_t len)
{
	json_t *age = json_object_get(peer, "latest_handshake_age");

	if (!peer) {
		snprintf(label, len, "no WireGuard peer");
		return H_BAD;
	}
	if (!json_is_integer(age)) {
		snprintf(label, len, "no handshake yet");
		return H_BAD;
	}
	snprintf(label, len, "handshake %llds ago", (long long)json_integer_value(age));
	/* an expired session on an idle link is renewed by the next packet: a warning */
	return json_integer_value(age) > HANDSHAKE_EXPIRED_S ? H_WARN : H_OK;
}

/*
 * Appends one printf-formatted line to label (len bytes, used so far) when
 * it fits whole, with room left for "\n..."; false when it does not.
 */
static bool add_line(char *label, size_t len, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool add_line(char *label, size_t len, size_t *used, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line) || *used + (size_t)n + sizeof("\\n...") > len)
		return false;
	memcpy(label + *used, line, (size_t)n + 1);
	*used += (size_t)n;
	return true;
}

/* The probe lines of one peer ("red plain 1390: ok") and their worst health. */
static enum health probes(json_t *status, const char *peer, char *label, size_t len)
{
	json_t *probe = json_object_get(status, "probes"), *r;
	bool stale = json_is_true(json_object_get(probe, "stale")), cut = false;
	enum health h = H_UNKNOWN;
	size_t i, used = 0;

	label[0] = '\0';
	json_array_foreach(json_object_get(probe, "results"), i, r)
	{
		const char *state = "ok";
		enum health one = H_OK;
		char what[64];

		if (strcmp(json_string_value(json_object_get(r, "peer")) ?: "", peer))
			continue;
		if (!json_is_true(json_object_get(r, "reachable"))) {
			state = "UNREACHABLE";
			one = H_BAD;
		} else if (json_is_true(json_object_get(r, "black_hole"))) {
			snprintf(what, sizeof(what), "BLACK HOLE, %lld pass",
				 (long long)json_integer_value(json_object_get(r, "largest")));
			state = what;
			one = H_WARN;
		}
		if (stale)
			one = H_UNKNOWN;
		h = worse(h, one);
		cut = cut || !add_line(label, len, &used, "\\n%s %s %lld: %s%s",
				       json_string_value(json_object_get(r, "zone")),
				       json_string_value(json_object_get(r, "transport")),
				       (long long)json_integer_value(json_object_get(r, "mtu")),
				       state, stale ? " (stale)" : "");
	}
	/* whole lines only: a line cut in its middle could end in half an escape */
	if (cut && used + sizeof("\\n...") <= len)
		used += (size_t)snprintf(label + used, len - used, "\\n...");
	return h;
}

static void write_nodes(json_t *status, const struct cluster *c, const char *self, FILE *f)
{
	char a[IP_ADDR_STRLEN], b[IP_ADDR_STRLEN];

	(void)status;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct node *n = &c->nodes[i];

		fprintf(f, "  \"%s\" [id=\"node-%s\", label=\"%s\\nunderlay %s\\nfabric %s\"%s];\n",
			n->name, n->name, n->name, ip_addr_str(&n->underlay, a, sizeof(a)),
			ip_addr_str(&n->fabric_address, b, sizeof(b)),
			strcmp(n->name, self) ? ""
					      : ", penwidth=2.5, style=\"bold,filled\", "
						"fillcolor=\"#eef3ff\"");
	}
}

static void write_links(json_t *status, const struct cluster *c, const char *self, FILE *f)
{
	for (size_t i = 0; i < c->n_nodes; i++) {
		for (size_t k = i + 1; k < c->n_nodes; k++) {
			const char *x = c->nodes[i].name, *y = c->nodes[k].name;
			const char *peer = !strcmp(x, self) ? y : !strcmp(y, self) ? x : NULL;
			char hs[64], pr[512];
			enum health h;

			if (!peer) {
				fprintf(f,
					"  \"%s\" -- \"%s\" [id=\"link-%s-%s\", style=dashed, "
					"color=gray70, fontcolor=gray50, label=\"not seen from "
					"%s\"];\n",
					x, y, x, y, self);
				continue;
			}
			h = worse(handshake(find_peer(status, peer), hs, sizeof(hs)),
				  probes(status, peer, pr, sizeof(pr)));
			fprintf(f,
				"  \"%s\" -- \"%s\" [id=\"link-%s-%s\", color=%s, fontcolor=%s, "
				"penwidth=2, label=\"%s%s\"];\n",
				x, y, x, y, colours[h], colours[h], hs, pr);
		}
	}
}

static void write_zones(json_t *status, FILE *f)
{
	json_t *z, *v;
	size_t i, k;

	/* not a node name: those have no spaces (a node called "zones" stays a node) */
	fputs("  \"zones legend\" [id=\"zones\", shape=note, fontsize=10, label=\"zones\\l", f);
	json_array_foreach(json_object_get(status, "zones"), i, z)
	{
		json_t *mtu = json_object_get(z, "mtu");

		fprintf(f, "%s: %s, MTU ", json_string_value(json_object_get(z, "name")),
			json_string_value(json_object_get(z, "transport")));
		if (json_is_integer(mtu))
			fprintf(f, "%lld, vnets", (long long)json_integer_value(mtu));
		else
			fputs("unknown, vnets", f);
		json_array_foreach(json_object_get(z, "vnets"), k, v)
		    fprintf(f, " %s", json_string_value(json_object_get(v, "name")));
		fputs("\\l", f);
	}
	fputs("\"];\n", f);
}

void status_dot_write(json_t *status, const struct cluster *c, FILE *f)
{
	const char *self = json_string_value(json_object_get(status, "node"));

	fprintf(f, "graph \"%s\" {\n", c->name);
	fprintf(f,
		"  label=\"cluster %s, seen from %s\\ngreen: fresh handshake, probes pass; orange: "
		"MTU black hole or expired session; red: unreachable\";\n",
		c->name, self);
	fputs("  labelloc=t; fontname=\"sans-serif\"; layout=circo;\n"
	      "  node [shape=box, style=rounded, fontname=\"sans-serif\"];\n"
	      "  edge [fontname=\"sans-serif\", fontsize=9];\n",
	      f);
	write_nodes(status, c, self, f);
	write_links(status, c, self, f);
	write_zones(status, f);
	fputs("}\n", f);
}

/*
 * `dot -Tsvg` with the DOT text on its stdin and our stdout as its own: 0
 * with how it ended in *wait_status (waitpid's), or -errno (not started, not
 * fed).
 */
static int render_svg(const char *text, size_t len, int *wait_status)
{
	char *argv[] = {"dot", "-Tsvg", NULL};
	posix_spawn_file_actions_t fa;
	int pipefd[2], status = 0, ret;
	void (*old_pipe)(int);
	pid_t pid;

	if (pipe(pipefd) < 0)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[0], STDIN_FILENO);
	posix_spawn_file_actions_addclose(&fa, pipefd[1]);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3); /* dot needs none of ours */
	fflush(stdout);
	ret = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[0]);
	if (ret) {
		close(pipefd[1]);
		return -ret;
	}
	/* a dot that exits before reading all (no svg plugin, say) must not kill fabricd */
	old_pipe = signal(SIGPIPE, SIG_IGN);
	ret = write_all(pipefd[1], text, len);
	close(pipefd[1]);
	signal(SIGPIPE, old_pipe);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	*wait_status = status; /* how dot ended (its own message says why it failed) */
	return WIFEXITED(status) && !WEXITSTATUS(status) && ret < 0 ? ret : 0;
}

int status_dot(json_t *status, const struct cluster *c, bool svg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int ret, ended = 0;

	if (!f)
		return 1;
	status_dot_write(status, c, f);
	fclose(f);
	if (!svg) {
		fwrite(text, 1, len, stdout);
		free(text);
		return 0;
	}
	ret = render_svg(text, len, &ended);
	free(text);
	if (ret == -ENOENT) {
		log_error("status --svg: Graphviz's dot is not installed: install graphviz, or "
			  "use --dot and render it elsewhere");
		return 1;
	}
	if (ret == 0 && WIFSIGNALED(ended)) {
		log_error("status --svg: dot -Tsvg was killed by signal %d; run fabricd status "
			  "--dot | dot -Tsvg to see why",
			  WTERMSIG(ended));
		return 1;
	}
	if (ret == 0 && WIFEXITED(ended) && WEXITSTATUS(ended)) {
		log_error("status --svg: dot -Tsvg exited with status %d; see its message above "
			  "(fabricd status --dot gives the graph it was given)",
			  WEXITSTATUS(ended));
		return 1;
	}
	if (ret < 0) {
		log_error(
		    "status --svg: cannot give dot -Tsvg the graph (%s); fabricd status --dot "
		    "gives it",
		    strerror(-ret));
		return 1;
	}
	return 0;
}
