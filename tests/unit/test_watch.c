// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_watch.c - what the daemon's inotify watch says of the definition
 * file (daemon/watch.h): written whole (closed after writing, renamed into
 * place) is read at once, anything else after the debounce, other files in
 * the directory not at all. Real inotify on a temporary directory.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/watch.h"
#include "unit.h"

static char dir[] = "/tmp/fabricd-test-watch-XXXXXX";
static char def[sizeof(dir) + 32], tmp[sizeof(dir) + 32], other[sizeof(dir) + 32];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void test_written_whole(struct file_watch *w)
{
	write_file(def, "{}\n");
	CHECK_INT(file_watch_read(w), FILE_WRITTEN, "created, written, closed");
	CHECK_INT(file_watch_read(w), FILE_UNCHANGED, "nothing new");

	write_file(tmp, "{\"a\": 1}\n");
	CHECK_INT(file_watch_read(w), FILE_UNCHANGED, "another file of the directory");
	CHECK_INT(rename(tmp, def), 0, "rename");
	CHECK_INT(file_watch_read(w), FILE_WRITTEN, "renamed into place");

	write_file(def, "{\"b\": 2}\n");
	CHECK_INT(file_watch_read(w), FILE_WRITTEN, "rewritten in place");
}

static void test_not_yet_whole(struct file_watch *w)
{
	int fd = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(fd >= 0, "open the other file");
	close(fd);
	CHECK_INT(file_watch_read(w), FILE_UNCHANGED, "another file, closed after writing");

	CHECK_INT(unlink(def), 0, "unlink");
	CHECK_INT(file_watch_read(w), FILE_CHANGED, "deleted: more may come");

	fd = open(def, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0, "create");
	CHECK_INT(file_watch_read(w), FILE_CREATED, "created, still open for writing");
	CHECK_INT(write(fd, "{}\n", 3), 3, "write");
	close(fd);
	CHECK_INT(file_watch_read(w), FILE_WRITTEN, "then closed: whole");

	/* an editor's save: the old file moved aside, the new one written */
	CHECK_INT(rename(def, tmp), 0, "moved away");
	write_file(def, "{}\n");
	CHECK_INT(file_watch_read(w), FILE_WRITTEN, "the last event decides: closed after writing");
	CHECK_INT(rename(def, other), 0, "moved away again");
	CHECK_INT(file_watch_read(w), FILE_CHANGED, "moved away, nothing in its place");
}

int main(void)
{
	struct file_watch w;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(def, sizeof(def), "%s/cluster.json", dir);
	snprintf(tmp, sizeof(tmp), "%s/cluster.json.new", dir);
	snprintf(other, sizeof(other), "%s/other.json", dir);
	CHECK_INT(file_watch_open(&w, def), 0, "watch");
	test_written_whole(&w);
	test_not_yet_whole(&w);
	file_watch_close(&w);
	unlink(def);
	unlink(tmp);
	unlink(other);
	rmdir(dir);
	return unit_summary("test_watch");
}
