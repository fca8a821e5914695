/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options.h - what a node command was asked to do: filled in by cli/main.c
 * from the command line, read by the engine, the daemon and the bench.
 */
#ifndef FABRICD_OPTIONS_H
#define FABRICD_OPTIONS_H

#include <stdbool.h>

#include "kmod/probe.h"

#define FABRICD_DEFAULT_CONFIG	 "/etc/fabricd/cluster.json"
#define FABRICD_DEFAULT_KEY_FILE "/etc/fabricd/private.key"
/* run --metrics-file-interval: node_exporter reads the file only when scraped */
#define FABRICD_DEFAULT_METRICS_FILE_INTERVAL_MS 10000

/* run writes its probe results here, status reads them */
/* the probe file, one per network namespace (a node): %llu its inode */
#define FABRICD_DEFAULT_PROBE_FILE "/run/fabricd/probe.net%llu.json"

struct options {
	const char *config;   /* -c FILE */
	const char *node;     /* -n NODE, default: hostname */
	const char *key_file; /* --key-file */
	const char *psk_dir;  /* --psk-dir */
	enum wg_backend_choice wg_backend;
	bool json;
	bool verbose;
	unsigned int grace; /* seconds an old VXLAN device keeps receiving after a switch */
	/* --end-grace ZONE[,ZONE...]: those zones' switches end now, as --grace 0 ends all */
	const char *end_grace;
	/* given on the command line, not the default (a command that ignores them refuses) */
	bool grace_given, probe_interval_given, key_file_given, config_given, wg_backend_given;
	/* --lock-wait: seconds a writer waits for the node's lock or the definition's */
	unsigned int lock_wait;
	bool lock_wait_given;
	/* init / join */
	const char *cluster_name;  /* --cluster */
	const char *prefix;	   /* --prefix CIDR */
	const char *listen_port;   /* --listen-port N, checked by init */
	const char *underlay;	   /* --underlay ADDR */
	bool rotate_key;	   /* --rotate-key */
	const char *ifupdown_file; /* --ifupdown-file, NULL: the default (engine/ifupdown.h) */
	int argc;		   /* positional arguments after the subcommand */
	char **argv;

	/* monitoring (daemon/monitor.h) */
	const char *metrics_listen; /* run --metrics ADDR:PORT */
	const char *metrics_file;   /* run --metrics-file PATH */
	/* run --metrics-file-interval: ms between writes of the file (0: the default) */
	unsigned int metrics_file_interval_ms;
	bool metrics_file_interval_given;
	const char *probe_file;		/* --probe-file: run writes it, status reads it */
	unsigned int probe_interval_ms; /* run --probe-interval; 0 = no probe rounds */
	bool dot, svg;			/* status --dot, --svg */
	/* run --sdn-dir DIR: follow Proxmox's .running-config there (daemon/source.h) */
	const char *sdn_dir;
	const char *corosync; /* run --corosync FILE, default DIR/../corosync.conf */
	/* --frr-pathspace: FRR started with -N NAME; NULL = the host's */
	const char *frr_pathspace;
};

#endif
