// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cli/import_pve.c - "fabricd import-pve": a cluster definition from Proxmox
 * VE's SDN configuration. Reads files only (the deployed .running-config, or
 * the pending *.cfg with --pending, and corosync.conf); the mapping is
 * definition/pve_import*.c. Writes nothing while anything failed to map,
 * unless --partial; the result always passes "fabricd check".
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "cli/commands.h"
#include "cli/getopt_say.h"
#include "definition/config.h"
#include "definition/pve_import.h"
#include "definition/pve_load.h"
#include "definition/pve_running.h"
#include "definition/pve_sections.h"
#include "definition/wgkey.h"

/* A key --generate-keys made, held until the import is accepted. */
struct new_key {
	char path[PATH_MAX];
	char node[64];
	uint8_t priv[WGKEY_LEN];
};

struct import_args {
	struct pve_paths paths; /* --sdn-dir, --corosync, --pending */
	const char *output, *key_out, *wg_keys, *node, *gen_dir;
	const char *simple; /* --simple plain|secure */
	bool partial;
	unsigned int underlay_mtu;
	struct new_key *new_keys; /* wiped and freed by free_new_keys() */
	size_t n_new_keys;
};

static void free_new_keys(struct import_args *a)
{
	if (a->new_keys)
		sodium_memzero(a->new_keys, a->n_new_keys * sizeof(*a->new_keys));
	free(a->new_keys);
	a->new_keys = NULL;
	a->n_new_keys = 0;
}

/* priv for node at path, kept for write_new_keys(); a grown copy, the old array wiped */
static int hold_new_key(struct import_args *a, const char *path, const char *node,
			const uint8_t priv[WGKEY_LEN])
{
	size_t n = a->n_new_keys;
	struct new_key *grown = calloc(n + 1, sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	if (n)
		memcpy(grown, a->new_keys, n * sizeof(*grown));
	free_new_keys(a);
	snprintf(grown[n].path, sizeof(grown[n].path), "%s", path);
	snprintf(grown[n].node, sizeof(grown[n].node), "%s", node);
	memcpy(grown[n].priv, priv, WGKEY_LEN);
	a->new_keys = grown;
	a->n_new_keys = n + 1;
	return 0;
}

/*
 * --generate-keys DIR: DIR/<node>.key, kept if it is there, so a re-import
 * is stable. A new key stays in memory until the import has been accepted
 * (write_new_keys()): a refused import leaves no key behind.
 */
static int new_key(void *ctx, const char *node, uint8_t pub[32])
{
	struct import_args *a = ctx;
	char path[PATH_MAX], err[PATH_MAX + 256];
	uint8_t priv[WGKEY_LEN];
	int ret;

	snprintf(path, sizeof(path), "%s/%s.key", a->gen_dir, node);
	ret = wgkey_load_file(path, priv, err, sizeof(err));
	/* a new key only where every later load accepts it */
	if (ret == -ENOENT && wgkey_check_dirs(path, WGKEY_FILE_PRIVATE, err, sizeof(err)) < 0)
		ret = -EPERM;
	if (ret == -ENOENT) {
		ret = wgkey_generate(priv);
		if (ret == 0)
			ret = hold_new_key(a, path, node, priv);
		if (ret < 0)
			snprintf(err, sizeof(err), "%s: cannot make a key: %s", path,
				 strerror(-ret));
	}
	if (ret == 0)
		wgkey_public(pub, priv);
	else if (ret == -ENOTDIR)
		log_error("--generate-keys %s: not a directory; give the directory that holds (or "
			  "is to hold) the nodes' NODE.key files",
			  a->gen_dir);
	else
		log_error("%s", err);
	sodium_memzero(priv, sizeof(priv));
	return ret;
}

/* What to do when a private key cannot be written (write_secret_file's ret). */
static const char *key_write_hint(int ret, const char *otherwise)
{
	if (ret == -ELOOP)
		return "a symbolic link: a private key is written into a file of its own, never "
		       "through a link (whoever made it would choose which file gets the key); "
		       "remove the link";
	if (ret == -EINVAL || ret == -EISDIR)
		return "not a regular file: a private key goes into a file of its own";
	return otherwise;
}

/* The keys new_key() made, each into its 0600 file; before the definition that names them. */
static int write_new_keys(const struct import_args *a)
{
	char b64[WGKEY_B64_LEN];
	int ret = 0;

	for (size_t i = 0; i < a->n_new_keys && ret == 0; i++) {
		const struct new_key *k = &a->new_keys[i];

		wgkey_to_base64(b64, k->priv);
		b64[WGKEY_B64_LEN - 1] = '\n';
		ret = write_secret_file(k->path, b64, WGKEY_B64_LEN);
		if (ret < 0)
			log_error("%s: cannot write: %s; the definition was not written (%s)",
				  k->path, strerror(-ret),
				  key_write_hint(ret, "create that directory, or give another "
						      "--generate-keys DIR"));
		else
			log_info("%s: new private key for node %s (copy it to that node's "
				 "/etc/fabricd/private.key, mode 0600)",
				 k->path, k->node);
	}
	sodium_memzero(b64, sizeof(b64));
	return ret;
}

/*
 * -n NODE (or the host name) as fabricd names the node: Proxmox's name
 * lowercased, so the name Proxmox shows (Hv1) finds the node (hv1) too.
 */
static const char *this_node(const struct import_args *a, char *host, size_t len)
{
	if (!a->node)
		return host_node_name(host, len);
	snprintf(host, len, "%s", a->node);
	for (char *p = host; *p; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
	return host;
}

/* --key-out FILE: this node's private key from priv/wg-keys.cfg, checked against fabrics.cfg. */
static int key_out(const struct import_args *a, const struct pve_import *imp, struct diag *d)
{
	char host[256], path[PATH_MAX], err[PATH_MAX + 256], b64[WGKEY_B64_LEN];
	const char *node = this_node(a, host, sizeof(host)), *pve_name, *iface;
	uint8_t pub[WGKEY_LEN], priv[WGKEY_LEN], derived[WGKEY_LEN];
	struct pve_file keys = {.name = "wg-keys.cfg", .dialect = PVE_DIALECT_RUST};
	char *text = NULL;
	size_t len = 0;
	int ret;

	if (!node || pve_import_node_key(imp, node, &pve_name, &iface, pub) < 0) {
		log_error("--key-out: node \"%s\" has no WireGuard key in Proxmox's fabric; give "
			  "this node's name with -n NODE",
			  node ? node : "?");
		return -ENOENT;
	}
	if (a->wg_keys)
		snprintf(path, sizeof(path), "%s", a->wg_keys);
	else
		snprintf(path, sizeof(path), "%s/../priv/wg-keys.cfg", a->paths.sdn_dir);
	ret = pve_read_file(path, &text, &len);
	if (ret < 0) {
		log_error("%s: cannot read: %s (give --wg-keys FILE)", path, strerror(-ret));
		return ret;
	}
	ret = pve_file_parse(&keys, text, len, d);
	sodium_memzero(text, len);
	free(text);
	if (ret == 0)
		ret = pve_wgkeys_find(&keys, pve_name, iface, priv, err, sizeof(err));
	else
		snprintf(err, sizeof(err),
			 "%s: not a section-config file (Proxmox keeps the WireGuard keys in "
			 "/etc/pve/priv/wg-keys.cfg; give that file with --wg-keys FILE)",
			 path);
	pve_file_wipe(&keys);
	pve_file_free(&keys);
	if (ret < 0) {
		log_error("--key-out: %s", err);
		return ret;
	}
	wgkey_public(derived, priv);
	if (sodium_memcmp(derived, pub, WGKEY_LEN) != 0) {
		log_error("--key-out: the private key of %s/%s in %s does not match its public_key "
			  "in fabrics.cfg; re-apply the fabric in Proxmox",
			  pve_name, iface, path);
		ret = -EINVAL;
	} else if (wgkey_load_file(a->key_out, derived, err, sizeof(err)) == 0 &&
		   sodium_memcmp(derived, priv, WGKEY_LEN) != 0) {
		/* a key made by `fabricd join`, say: never lost to an import */
		log_error("--key-out: %s holds another private key; nothing written: move it away "
			  "first, or give another --key-out",
			  a->key_out);
		ret = -EEXIST;
	} else if (wgkey_check_dirs(a->key_out, WGKEY_FILE_PRIVATE, err, sizeof(err)) < 0) {
		log_error("--key-out: %s; nothing written", err);
		ret = -EPERM;
	} else {
		wgkey_to_base64(b64, priv);
		b64[WGKEY_B64_LEN - 1] = '\n';
		ret = write_secret_file(a->key_out, b64, WGKEY_B64_LEN);
		if (ret < 0)
			log_error("%s: cannot write: %s (%s)", a->key_out, strerror(-ret),
				  key_write_hint(ret, "give another --key-out"));
	}
	sodium_memzero(b64, sizeof(b64));
	sodium_memzero(priv, sizeof(priv));
	return ret;
}

enum {
	OPT_SDN_DIR = 256,
	OPT_COROSYNC,
	OPT_PENDING,
	OPT_PARTIAL,
	OPT_KEY_OUT,
	OPT_WG_KEYS,
	OPT_UNDERLAY_MTU,
	OPT_GENERATE_KEYS,
	OPT_SIMPLE,
};

static void import_usage(FILE *f)
{
	fprintf(f, "Usage: fabricd import-pve [--sdn-dir DIR] [--corosync FILE] [--pending]\n"
		   "                          [-o FILE] [--partial] [--key-out FILE [-n NODE]]\n"
		   "                          [--wg-keys FILE] [--underlay-mtu N]\n"
		   "                          [--generate-keys DIR] [--simple plain|secure]\n");
}

/* One option; 1 after --help, -1 on a bad one. */
static int parse_one(struct import_args *a, int c)
{
	char *end;

	switch (c) {
	case OPT_SDN_DIR:
		a->paths.sdn_dir = optarg;
		return 0;
	case OPT_COROSYNC:
		a->paths.corosync = optarg;
		a->paths.corosync_given = true;
		return 0;
	case OPT_PENDING:
		a->paths.pending = true;
		return 0;
	case 'o':
		a->output = optarg;
		return 0;
	case OPT_PARTIAL:
		a->partial = true;
		return 0;
	case OPT_KEY_OUT:
		a->key_out = optarg;
		return 0;
	case OPT_WG_KEYS:
		a->wg_keys = optarg;
		return 0;
	case 'n':
		a->node = optarg;
		return 0;
	case OPT_GENERATE_KEYS:
		a->gen_dir = optarg;
		return 0;
	case OPT_SIMPLE:
		if (strcmp(optarg, "plain") && strcmp(optarg, "secure")) {
			log_error("--simple \"%s\": give plain or secure, the transport of "
				  "the zones that carry Proxmox's Simple zones",
				  optarg);
			return -1;
		}
		a->simple = optarg;
		return 0;
	case 'v':
		log_set_verbose(true);
		return 0;
	case OPT_UNDERLAY_MTU:
		a->underlay_mtu = (unsigned int)strtoul(optarg, &end, 10);
		if (*end || a->underlay_mtu < 576 || a->underlay_mtu > 65535) {
			log_error("--underlay-mtu \"%s\": give 576..65535", optarg);
			return -1;
		}
		return 0;
	case 'h':
		import_usage(stdout);
		return 1;
	default:
		return -1; /* said by parse_args() */
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct import_args *a)
{
	static const struct option opts[] = {
	    {"sdn-dir", required_argument, NULL, OPT_SDN_DIR},
	    {"corosync", required_argument, NULL, OPT_COROSYNC},
	    {"pending", no_argument, NULL, OPT_PENDING},
	    {"output", required_argument, NULL, 'o'},
	    {"partial", no_argument, NULL, OPT_PARTIAL},
	    {"key-out", required_argument, NULL, OPT_KEY_OUT},
	    {"wg-keys", required_argument, NULL, OPT_WG_KEYS},
	    {"node", required_argument, NULL, 'n'},
	    {"underlay-mtu", required_argument, NULL, OPT_UNDERLAY_MTU},
	    {"generate-keys", required_argument, NULL, OPT_GENERATE_KEYS},
	    {"simple", required_argument, NULL, OPT_SIMPLE},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct cli_seen seen = {0};
	int c;

	optind = 0; /* the caller's getopt state is not ours */
	opterr = 0; /* a refused option is said in one line */
	while ((c = getopt_long(argc, argv, ":o:n:vh", opts, NULL)) != -1) {
		int ret;

		if (c == '?' || c == ':') {
			cli_bad_option("import-pve", c, argv, opts, "fabricd import-pve");
			return -1;
		}
		if (cli_once(&seen, opts, c, optarg) < 0)
			return -1;
		ret = parse_one(a, c);

		if (ret != 0)
			return ret;
	}
	if (optind < argc) {
		log_error("import-pve: unexpected argument \"%s\"", argv[optind]);
		return -1;
	}
	return 0;
}

/*
 * --pending --simple: a followed zone takes its vnets from .running-config,
 * so a Simple zone that is only pending is refused by check, plan and run
 * until Proxmox's SDN Apply deploys it. Said here, as a warning.
 */
static void warn_unapplied(const struct import_args *a, const struct pve_files *x, struct diag *d)
{
	const struct pve_file *zones = &x->pending[0];
	struct pve_running r = {0};
	char path[PATH_MAX], where[PVE_WHERE_LEN];
	struct diag ignored;
	size_t len;
	char *text;

	if (!a->paths.pending || !a->simple)
		return;
	snprintf(path, sizeof(path), "%s/.running-config", a->paths.sdn_dir);
	diag_init(&ignored);
	if (pve_read_file(path, &text, &len) == 0) {
		pve_running_parse(text, len, &r, &ignored); /* unreadable: none is applied */
		free(text);
	}
	for (size_t i = 0; i < zones->n; i++) {
		const struct pve_section *s = &zones->sections[i];
		bool applied = false;

		if (strcmp(s->type, "simple"))
			continue;
		for (size_t k = 0; k < r.zones.n && !applied; k++)
			applied = !strcmp(r.zones.sections[k].id, s->id) &&
				  !strcmp(r.zones.sections[k].type, "simple");
		if (!applied)
			diag_warn(d, pve_where(where, zones, s, NULL),
				  "not applied yet (%s has no Simple zone %s): fabricd check, plan "
				  "and run refuse the zone that follows it until you Apply the SDN "
				  "configuration in Proxmox (Datacenter > SDN)",
				  path, s->id);
	}
	pve_running_free(&r);
	diag_free(&ignored);
}

/* The section of f with s's type and id, or NULL. */
static const struct pve_section *same_section(const struct pve_file *f, const struct pve_section *s)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->sections[i].id, s->id) && !strcasecmp(f->sections[i].type, s->type))
			return &f->sections[i];
	return NULL;
}

#define APPLY_HINT                                                                                 \
	"Apply the SDN configuration in Proxmox (Datacenter > SDN) and import again, or import "   \
	"the pending files (--pending)"

/* Whether each item of list a is one of b's. */
static bool items_in(const char *a, const char *b)
{
	char **ia = NULL, **ib = NULL;
	int na = pve_split_list(a, &ia), nb = pve_split_list(b, &ib);
	bool all = na >= 0 && nb >= 0;

	for (int i = 0; all && i < na; i++) {
		bool found = false;

		for (int k = 0; k < nb && !found; k++)
			found = !strcmp(ia[i], ib[k]);
		all = found;
	}
	if (na >= 0)
		pve_strv_free(ia);
	if (nb >= 0)
		pve_strv_free(ib);
	return all;
}

/*
 * The values of key in the pending and the deployed section are the same: a
 * list (peers, nodes; .running-config holds nodes in hash order) as a set.
 */
static bool same_value(const char *key, const char *a, const char *b)
{
	if (strcmp(key, "peers") && strcmp(key, "nodes"))
		return !strcmp(a, b);
	return items_in(a, b) && items_in(b, a);
}

/* The keys that make a zone's or vnet's transport, members and VNIs differ between p and r. */
static void diff_keys(const struct pve_file *pf, const struct pve_section *p,
		      const struct pve_section *r, struct diag *d)
{
	static const char *const keys[] = {"zone", "tag", "peers", "fabric", "mtu", "nodes", NULL};
	char where[PVE_WHERE_LEN];

	for (size_t k = 0; keys[k]; k++) {
		const struct pve_kv *a = pve_section_get(p, keys[k], NULL);
		const struct pve_kv *b = pve_section_get(r, keys[k], NULL);
		const char *av = a && a->value ? a->value : "", *bv = b && b->value ? b->value : "";

		if ((a || b) && !same_value(keys[k], av, bv))
			diag_warn(d, pve_where(where, pf, p, keys[k]),
				  "\"%s\" is not applied yet: .running-config has \"%s\", which is "
				  "what import-pve reads; " APPLY_HINT,
				  av, bv);
	}
}

/*
 * Without --pending the deployed .running-config is imported: zones and vnets
 * edited in Proxmox but not applied yet differ from it. Said, naming each.
 */
static void warn_pending(const struct import_args *a, const struct pve_files *x, struct diag *d)
{
	static const char *const names[] = {"zones.cfg", "vnets.cfg"};
	const struct pve_file *running[] = {x->in.zones, x->in.vnets};
	char path[PATH_MAX], where[PVE_WHERE_LEN];
	struct diag ignored;

	if (a->paths.pending)
		return;
	diag_init(&ignored); /* the pending files' own problems are --pending's to say */
	for (size_t i = 0; i < 2; i++) {
		struct pve_file f = {.name = names[i], .dialect = PVE_DIALECT_PERL};
		size_t len;
		char *text;

		snprintf(path, sizeof(path), "%s/%s", a->paths.sdn_dir, names[i]);
		if (pve_read_file(path, &text, &len) < 0)
			continue; /* none: nothing pending to compare */
		pve_file_parse(&f, text, len, &ignored);
		free(text);
		for (size_t k = 0; k < f.n; k++) {
			const struct pve_section *r = same_section(running[i], &f.sections[k]);

			if (r)
				diff_keys(&f, &f.sections[k], r, d);
			else
				diag_warn(d, pve_where(where, &f, &f.sections[k], NULL),
					  "not applied yet (not in .running-config), so not "
					  "imported; " APPLY_HINT);
		}
		for (size_t k = 0; k < running[i]->n; k++)
			if (!same_section(&f, &running[i]->sections[k]))
				diag_warn(
				    d, pve_where(where, running[i], &running[i]->sections[k], NULL),
				    "deleted in %s but not applied yet: import-pve reads the "
				    "deployed one; " APPLY_HINT,
				    names[i]);
		pve_file_free(&f);
	}
	diag_free(&ignored);
}

/* Prints what was found; 0 when the definition may be written. */
static int report(const struct import_args *a, const struct diag *d)
{
	diag_print(d, stderr);
	if (d->n == 0)
		return 0;
	if (a->partial) {
		log_warn("import-pve: %zu thing(s) above do not map and are left out (--partial)",
			 d->n);
		return 0;
	}
	log_error("import-pve: %zu thing(s) above do not map: nothing written; fix them in "
		  "Proxmox, or give --partial to import the rest",
		  d->n);
	return -1;
}

/* The definition must load exactly as "fabricd check" loads it. */
static int verify(const char *json)
{
	struct cluster *c = NULL;
	struct diag d;
	int ret;

	diag_init(&d);
	ret = config_load_buffer(json, strlen(json), &c, &d);
	if (ret < 0) {
		diag_print(&d, stderr);
		log_error(
		    "import-pve: the imported definition does not pass fabricd check (above); "
		    "nothing written");
	}
	cluster_free(c);
	diag_free(&d);
	return ret;
}

static int write_definition(const struct import_args *a, const char *json)
{
	int ret;

	if (!a->output)
		ret = write_all(STDOUT_FILENO, json, strlen(json));
	else
		ret = write_output(a->output, json, strlen(json), 0644);
	if (ret == -EPERM && a->output && link_of_another_user(a->output))
		log_error("%s: cannot write: " FOREIGN_LINK_HINT, a->output);
	else if (ret < 0)
		log_error(
		    "%s: cannot write: %s%s", a->output ? a->output : "stdout", strerror(-ret),
		    ret == -ENOENT ? "; create its directory first, or give another -o FILE" : "");
	return ret;
}

int cmd_import_pve(const struct options *o)
{
	struct import_args a = {.paths = {.sdn_dir = PVE_DEFAULT_SDN_DIR}};
	struct pve_import_opts opts = {0};
	char sdn_dir[PATH_MAX], corosync[PATH_MAX];
	struct pve_import *imp = NULL;
	struct pve_files x;
	struct diag d;
	char *json = NULL;
	int ret;

	ret = parse_args(o->argc, o->argv, &a);
	if (ret != 0)
		return ret < 0 ? 1 : 0;
	if (!a.paths.corosync_given) {
		/* beside the SDN directory, as run and plan take it; missing: a warning here */
		bool pending = a.paths.pending;

		pve_paths_init(&a.paths, a.paths.sdn_dir, NULL, corosync, sizeof(corosync));
		a.paths.corosync_given = false;
		a.paths.pending = pending;
	}
	opts.underlay_mtu = a.underlay_mtu;
	opts.simple = a.simple;
	if (a.simple && !realpath(a.paths.sdn_dir, sdn_dir)) {
		log_error("--sdn-dir %s: %s; give Proxmox's SDN directory", a.paths.sdn_dir,
			  strerror(errno));
		return 1;
	}
	opts.sdn_dir = a.simple ? sdn_dir : NULL;
	if (a.gen_dir) {
		opts.new_key = new_key;
		opts.ctx = &a;
	}
	diag_init(&d);
	ret = pve_files_read(&a.paths, &x, &d);
	if (ret == 0)
		ret = pve_import_run(&x.in, &opts, &imp, &d);
	if (ret == 0) {
		warn_unapplied(&a, &x, &d);
		warn_pending(&a, &x, &d);
		/* before the report: what the definition leaves out is said there too */
		ret = (json = pve_import_json(imp)) ? report(&a, &d) : -ENOMEM;
	} else
		diag_print(&d, stderr);
	if (ret == 0)
		ret = verify(json);
	if (ret == 0 && a.key_out)
		ret = key_out(&a, imp, &d);
	if (ret == 0)
		ret = write_new_keys(&a);
	if (ret == 0)
		ret = write_definition(&a, json);
	free_new_keys(&a);
	free(json);
	pve_import_free(imp);
	pve_files_free(&x);
	diag_free(&d);
	return ret == 0 ? 0 : 1;
}
