// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cli/import_pve.c - "fabricd import-pve": a cluster definition from Proxmox
 * VE's SDN configuration. Reads files only (the deployed .running-config, or
 * the pending *.cfg with --pending, and corosync.conf); the mapping is
 * definition/pve_import*.c. Writes nothing while anything failed to map,
 * unless --partial; the result always passes "fabricd check".
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "cli/commands.h"
#include "definition/config.h"
#include "definition/pve_import.h"
#include "definition/pve_running.h"
#include "definition/wgkey.h"

#define FILE_MAX (16U << 20) /* Proxmox's files are small; refuse anything absurd */

struct import_args {
	const char *sdn_dir, *corosync, *output, *key_out, *wg_keys, *node, *gen_dir;
	bool pending, partial, corosync_given;
	unsigned int underlay_mtu;
};

/* The whole file, NUL-terminated. -errno; -ENOENT when it does not exist. */
static int slurp(const char *path, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	size_t used = 0, cap = 4096;
	int ret = 0;

	*buf = NULL;
	if (fd < 0)
		return -errno;
	/* pmxcfs reports sizes, but do not trust st_size for a FUSE file */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	*buf = malloc(cap);
	while (*buf) {
		ssize_t n;

		if (used + 1 == cap) {
			char *grown = cap < FILE_MAX ? realloc(*buf, cap * 2) : NULL;

			if (!grown) {
				ret = cap < FILE_MAX ? -ENOMEM : -EFBIG;
				break;
			}
			*buf = grown;
			cap *= 2;
		}
		n = read(fd, *buf + used, cap - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : 0;
			break;
		}
		used += (size_t)n;
	}
	close(fd);
	if (!*buf)
		return -ENOMEM;
	if (ret < 0) {
		sodium_memzero(*buf, cap);
		free(*buf);
		*buf = NULL;
		return ret;
	}
	(*buf)[used] = '\0';
	*len = used;
	return 0;
}

/* Writes data to path through a 0600/0644 temporary file and rename(2). */

/* One section-config file of the SDN directory; a missing file is empty. */
static int read_cfg(const struct import_args *a, const char *name, enum pve_dialect dialect,
		    struct pve_file *f, struct diag *d)
{
	char path[PATH_MAX];
	char *text;
	size_t len;
	int ret;

	f->name = name;
	f->dialect = dialect;
	snprintf(path, sizeof(path), "%s/%s", a->sdn_dir, name);
	ret = slurp(path, &text, &len);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0) {
		log_error("%s: cannot read: %s", path, strerror(-ret));
		return ret;
	}
	ret = pve_file_parse(f, text, len, d);
	free(text);
	pve_file_sort(f);		 /* the same order as .running-config gives */
	return ret == -EINVAL ? 0 : ret; /* a rejected RUST file is an error in d */
}

struct inputs {
	struct pve_running running;
	struct pve_file pending[5];
	struct corosync_conf corosync;
	bool have_corosync;
	struct pve_input in;
};

static int read_sdn(const struct import_args *a, struct inputs *x, struct diag *d)
{
	static const char *const names[] = {"zones.cfg", "vnets.cfg", "subnets.cfg",
					    "controllers.cfg", "fabrics.cfg"};
	char path[PATH_MAX];
	char *text;
	size_t len;
	int ret = 0;

	if (a->pending) {
		for (size_t i = 0; i < 5 && ret == 0; i++)
			ret = read_cfg(a, names[i], i == 4 ? PVE_DIALECT_RUST : PVE_DIALECT_PERL,
				       &x->pending[i], d);
		x->in.zones = &x->pending[0];
		x->in.vnets = &x->pending[1];
		x->in.subnets = &x->pending[2];
		x->in.controllers = &x->pending[3];
		x->in.fabrics = &x->pending[4];
		return ret;
	}
	snprintf(path, sizeof(path), "%s/.running-config", a->sdn_dir);
	ret = slurp(path, &text, &len);
	if (ret < 0) {
		log_error("%s: cannot read: %s; Proxmox writes it on SDN \"Apply\" (or import the "
			  "pending *.cfg files with --pending)",
			  path, strerror(-ret));
		return ret;
	}
	ret = pve_running_parse(text, len, &x->running, d);
	free(text);
	x->in.zones = &x->running.zones;
	x->in.vnets = &x->running.vnets;
	x->in.subnets = &x->running.subnets;
	x->in.controllers = &x->running.controllers;
	x->in.fabrics = &x->running.fabrics;
	return ret;
}

static int read_corosync(const struct import_args *a, struct inputs *x, struct diag *d)
{
	char *text;
	size_t len;
	int ret = slurp(a->corosync, &text, &len);

	x->in.corosync_name = a->corosync;
	if (ret == -ENOENT && !a->corosync_given) {
		log_warn("%s: not found; nodes come from the WireGuard fabric only (give "
			 "--corosync FILE)",
			 a->corosync);
		return 0;
	}
	if (ret < 0) {
		log_error("%s: cannot read: %s", a->corosync, strerror(-ret));
		return ret;
	}
	ret = corosync_parse(text, len, a->corosync, &x->corosync, d);
	free(text);
	if (ret == 0) {
		x->have_corosync = true;
		x->in.corosync = &x->corosync;
	}
	return ret;
}

static void inputs_free(struct inputs *x)
{
	pve_running_free(&x->running);
	for (size_t i = 0; i < 5; i++)
		pve_file_free(&x->pending[i]);
	corosync_free(&x->corosync);
}

/* --generate-keys DIR: DIR/<node>.key (kept if it is there, so a re-import is stable). */
static int new_key(void *ctx, const char *node, uint8_t pub[32])
{
	const struct import_args *a = ctx;
	char path[PATH_MAX], err[PATH_MAX + 256], b64[WGKEY_B64_LEN];
	uint8_t priv[WGKEY_LEN];
	int ret;

	snprintf(path, sizeof(path), "%s/%s.key", a->gen_dir, node);
	ret = wgkey_load_file(path, priv, err, sizeof(err));
	if (ret == -ENOENT) {
		ret = wgkey_generate(priv);
		wgkey_to_base64(b64, priv);
		b64[WGKEY_B64_LEN - 1] = '\n';
		if (ret == 0)
			ret = write_file_atomic(path, b64, WGKEY_B64_LEN, 0600, false);
		sodium_memzero(b64, sizeof(b64));
		if (ret < 0)
			snprintf(err, sizeof(err), "%s: cannot write: %s", path, strerror(-ret));
		else
			log_info("%s: new private key for node %s (copy it to that node's "
				 "/etc/fabricd/private.key, mode 0600)",
				 path, node);
	}
	if (ret == 0)
		wgkey_public(pub, priv);
	else
		log_error("%s", err);
	sodium_memzero(priv, sizeof(priv));
	return ret;
}

static const char *this_node(const struct import_args *a, char *host, size_t len)
{
	if (a->node)
		return a->node;
	if (gethostname(host, len - 1) < 0)
		return NULL;
	host[len - 1] = '\0';
	host[strcspn(host, ".")] = '\0'; /* "hv1.example.org" is node "hv1" */
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
		snprintf(path, sizeof(path), "%s/../priv/wg-keys.cfg", a->sdn_dir);
	ret = slurp(path, &text, &len);
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
		snprintf(err, sizeof(err), "%s: not a section-config file", path);
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
	} else {
		wgkey_to_base64(b64, priv);
		b64[WGKEY_B64_LEN - 1] = '\n';
		ret = write_file_atomic(a->key_out, b64, WGKEY_B64_LEN, 0600, false);
		if (ret < 0)
			log_error("%s: cannot write: %s", a->key_out, strerror(-ret));
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
};

static void import_usage(FILE *f)
{
	fprintf(f, "Usage: fabricd import-pve [--sdn-dir DIR] [--corosync FILE] [--pending]\n"
		   "                          [-o FILE] [--partial] [--key-out FILE [-n NODE]]\n"
		   "                          [--wg-keys FILE] [--underlay-mtu N]\n"
		   "                          [--generate-keys DIR]\n");
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
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	char *end;
	int c;

	optind = 0; /* the caller's getopt state is not ours */
	while ((c = getopt_long(argc, argv, "o:n:vh", opts, NULL)) != -1) {
		switch (c) {
		case OPT_SDN_DIR:
			a->sdn_dir = optarg;
			break;
		case OPT_COROSYNC:
			a->corosync = optarg;
			a->corosync_given = true;
			break;
		case OPT_PENDING:
			a->pending = true;
			break;
		case 'o':
			a->output = optarg;
			break;
		case OPT_PARTIAL:
			a->partial = true;
			break;
		case OPT_KEY_OUT:
			a->key_out = optarg;
			break;
		case OPT_WG_KEYS:
			a->wg_keys = optarg;
			break;
		case 'n':
			a->node = optarg;
			break;
		case OPT_GENERATE_KEYS:
			a->gen_dir = optarg;
			break;
		case 'v':
			log_set_verbose(true);
			break;
		case OPT_UNDERLAY_MTU:
			a->underlay_mtu = (unsigned int)strtoul(optarg, &end, 10);
			if (*end || a->underlay_mtu < 576 || a->underlay_mtu > 65535) {
				log_error("--underlay-mtu \"%s\": give 576..65535", optarg);
				return -1;
			}
			break;
		case 'h':
			import_usage(stdout);
			return 1;
		default:
			import_usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		log_error("import-pve: unexpected argument \"%s\"", argv[optind]);
		return -1;
	}
	return 0;
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
		ret = write_file_atomic(a->output, json, strlen(json), 0644, false);
	if (ret < 0)
		log_error("%s: cannot write: %s", a->output ? a->output : "stdout", strerror(-ret));
	return ret;
}

int cmd_import_pve(const struct options *o)
{
	struct import_args a = {.sdn_dir = "/etc/pve/sdn", .corosync = "/etc/pve/corosync.conf"};
	struct pve_import_opts opts = {0};
	struct pve_import *imp = NULL;
	struct inputs x = {0};
	struct diag d;
	char *json = NULL;
	int ret;

	ret = parse_args(o->argc, o->argv, &a);
	if (ret != 0)
		return ret < 0 ? 1 : 0;
	opts.underlay_mtu = a.underlay_mtu;
	if (a.gen_dir) {
		opts.new_key = new_key;
		opts.ctx = &a;
	}
	diag_init(&d);
	ret = read_sdn(&a, &x, &d);
	if (ret == 0)
		ret = read_corosync(&a, &x, &d);
	if (ret == 0)
		ret = pve_import_run(&x.in, &opts, &imp, &d);
	if (ret == 0)
		ret = report(&a, &d);
	else
		diag_print(&d, stderr);
	if (ret == 0 && !(json = pve_import_json(imp)))
		ret = -ENOMEM;
	if (ret == 0)
		ret = verify(json);
	if (ret == 0 && a.key_out)
		ret = key_out(&a, imp, &d);
	if (ret == 0)
		ret = write_definition(&a, json);
	free(json);
	pve_import_free(imp);
	inputs_free(&x);
	diag_free(&d);
	return ret == 0 ? 0 : 1;
}
