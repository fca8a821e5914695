// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_util.c - write_file_atomic and write_output against what a path can
 * be: nothing, a regular file, a symlink to one, a dangling link, a
 * directory, a FIFO (standing in for /dev/null and /dev/stdout, which a
 * test must not risk).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "unit.h"

static char dir[64];

static const char *at(const char *name)
{
	static char path[2][128];
	static int which;

	which ^= 1;
	snprintf(path[which], sizeof(path[which]), "%s/%s", dir, name);
	return path[which];
}

static char *slurp(const char *path)
{
	static char buf[256];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static mode_t mode_of(const char *path, bool follow)
{
	struct stat st;

	return (follow ? stat(path, &st) : lstat(path, &st)) == 0 ? st.st_mode : 0;
}

static void test_regular_and_new(void)
{
	CHECK_INT(write_file_atomic(at("new"), "one\n", 4, 0600, false), 0, "a new file");
	CHECK_STR(slurp(at("new")), "one\n", "its content");
	CHECK_INT(mode_of(at("new"), false) & 07777, 0600, "its mode");
	CHECK_INT(write_file_atomic(at("new"), "two\n", 4, 0644, false), 0, "replaced");
	CHECK_STR(slurp(at("new")), "two\n", "the new content");
	CHECK_INT(mode_of(at("new"), false) & 07777, 0644, "the new mode");
}

/* A symlink stays one: the file it names is replaced (as set-transport does). */
static void test_symlink(void)
{
	CHECK_INT(write_file_atomic(at("target"), "old\n", 4, 0644, false), 0, "the target");
	CHECK_INT(symlink("target", at("link")), 0, "a relative link");
	CHECK_INT(write_file_atomic(at("link"), "new\n", 4, 0644, false), 0, "through the link");
	CHECK(S_ISLNK(mode_of(at("link"), false)), "the link is still a link");
	CHECK_STR(slurp(at("target")), "new\n", "the target has the content");
	CHECK_INT(symlink("nowhere", at("dangling")), 0, "a dangling link");
	CHECK_INT(write_file_atomic(at("dangling"), "x\n", 2, 0644, false), -EINVAL,
		  "a dangling link is refused");
	CHECK(S_ISLNK(mode_of(at("dangling"), false)), "and stays");
}

/*
 * Links of another user's (lchown to nobody: the tests run as root) are
 * never followed, neither at the file nor on the way to it; root's are,
 * ".." included as the kernel takes it (from where a link led).
 */
static void test_trusted_links(void)
{
	char name[NAME_MAX + 1];
	int fd, dirfd;

	CHECK_INT(mkdir(at("real"), 0700), 0, "a directory");
	CHECK_INT(write_file_atomic(at("real/file"), "root\n", 5, 0644, false), 0, "a file in it");
	CHECK_INT(symlink("real", at("rootdir")), 0, "root's link to the directory");
	CHECK_INT(write_file_atomic(at("rootdir/file"), "via\n", 4, 0644, false), 0,
		  "written through root's directory link");
	CHECK_STR(slurp(at("real/file")), "via\n", "into the real directory");
	fd = open_trusted(at("rootdir/../rootdir/./file"), O_RDONLY);
	CHECK(fd >= 0, "read through root's links, \"..\" and \".\": %d", fd);
	if (fd >= 0)
		close(fd);
	CHECK_INT(open_trusted(at("missing"), O_RDONLY), -ENOENT, "none there: -ENOENT");
	CHECK_INT(open_trusted(at("dangling"), O_RDONLY), -ENOENT, "a dangling link: -ENOENT");
	CHECK_INT(resolve_trusted(at("real/"), &dirfd, name), -EISDIR, "a directory");
	CHECK_INT(resolve_trusted(at("real/file/x"), &dirfd, name), -ENOTDIR, "a file on the way");
	CHECK_INT(resolve_trusted(at("nodir/x"), &dirfd, name), -ENOENT, "a directory missing");
	CHECK_INT(resolve_trusted(at("rootdir/new"), &dirfd, name), 0, "a file not there yet");
	CHECK_STR(name, "new", "its name");
	close(dirfd);
	if (geteuid() != 0) {
		CHECK(true, "not root: another user's links cannot be made");
		return;
	}
	CHECK_INT(symlink("real/file", at("theirs")), 0, "a link to a file");
	CHECK_INT(lchown(at("theirs"), 65534, 65534), 0, "... of nobody's");
	CHECK_INT(write_file_atomic(at("theirs"), "x\n", 2, 0644, false), -EPERM,
		  "not written through");
	CHECK_INT(open_trusted(at("theirs"), O_RDONLY), -EPERM, "not read through");
	CHECK(link_of_another_user(at("theirs")), "said so");
	CHECK_STR(slurp(at("real/file")), "via\n", "the file as it was");
	CHECK_INT(symlink("real", at("theirdir")), 0, "a link to the directory");
	CHECK_INT(lchown(at("theirdir"), 65534, 65534), 0, "... of nobody's");
	CHECK_INT(symlink("theirdir/file", at("mine")), 0, "root's link through it");
	CHECK_INT(write_file_atomic(at("mine"), "x\n", 2, 0644, false), -EPERM,
		  "not written through a link of another user's on the way");
	CHECK_INT(write_file_atomic(at("theirdir/new"), "x\n", 2, 0644, false), -EPERM,
		  "nor into the directory it names");
	CHECK_INT(open_trusted(at("mine"), O_RDONLY), -EPERM, "nor read");
	CHECK(link_of_another_user(at("mine")), "said so");
	CHECK(!link_of_another_user(at("rootdir/file")), "root's links are not another user's");
	CHECK_INT(access(at("real/new"), F_OK), -1, "nothing made");
	unlink(at("mine"));
	unlink(at("theirdir"));
	unlink(at("theirs"));
}

/* What is not a regular file is never replaced by a file. */
static void test_special(void)
{
	CHECK_INT(mkfifo(at("fifo"), 0600), 0, "a FIFO");
	CHECK_INT(write_file_atomic(at("fifo"), "x\n", 2, 0600, false), -EINVAL, "refused");
	CHECK(S_ISFIFO(mode_of(at("fifo"), false)), "still a FIFO");
	CHECK_INT(mkdir(at("sub"), 0700), 0, "a directory");
	CHECK_INT(write_file_atomic(at("sub"), "x\n", 2, 0600, false), -EISDIR, "refused");
	CHECK_INT(write_output(at("sub"), "x\n", 2, 0644), -EISDIR, "as an output too");
}

/* -o FILE: a FIFO (as /dev/stdout or /dev/null) is written into, not replaced. */
static void test_output_to_fifo(void)
{
	int rd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
	char buf[16] = "";

	CHECK(rd >= 0, "a reader on the FIFO");
	CHECK_INT(write_output(at("fifo"), "json\n", 5, 0644), 0, "written into it");
	CHECK_INT(read(rd, buf, sizeof(buf) - 1), 5, "the reader gets it");
	CHECK_STR(buf, "json\n", "whole");
	CHECK(S_ISFIFO(mode_of(at("fifo"), false)), "still a FIFO");
	close(rd);
	CHECK_INT(write_output(at("out"), "a\n", 2, 0644), 0, "a new output file");
	CHECK_STR(slurp(at("out")), "a\n", "its content");
	CHECK_INT(mode_of(at("out"), false) & 07777, 0644, "its mode");
}

int main(void)
{
	const char *names[] = {"new", "target", "link", "dangling", "fifo", "out"};

	snprintf(dir, sizeof(dir), "/tmp/test_util.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_regular_and_new();
	test_symlink();
	test_trusted_links();
	test_special();
	test_output_to_fifo();
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(at(names[i]));
	unlink(at("real/file"));
	unlink(at("rootdir"));
	rmdir(at("real"));
	rmdir(at("sub"));
	rmdir(dir);
	return unit_summary("test_util");
}
