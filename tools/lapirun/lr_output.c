/*
 * lr_output.c - forward a CG's stdout/stderr line by line.
 *
 * Whole lines only, each in one write(), so the lines of several CGs
 * never mix within a line; with --label each gets "[rank] " in front.
 * A last line without a newline gets one at the end of the stream, so it
 * cannot run into another CG's output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lapirun.h"

#define LR_CHUNK 65536   /* a line longer than this is passed on in parts */

static void write_full(int fd, const char *p, size_t n)
{
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return; /* our output is gone (EPIPE): nothing to do with it */
    p += w;
    n -= (size_t)w;
  }
}

/* Forward one line (n bytes, with its newline if it has one); end adds
 * a missing newline, at the end of the stream or of a --label part. */
static void emit(const struct lr_stream *s, int label, const char *line,
                 size_t n, int end)
{
  int nl = end && (n == 0 || line[n - 1] != '\n');
  if (!label && !nl) {
    write_full(s->out_fd, line, n);
    return;
  }
  char head[24];
  int hl = label ? snprintf(head, sizeof head, "[%d] ", s->rank) : 0;
  char *out = malloc((size_t)hl + n + 1);
  if (out == NULL) {
    write_full(s->out_fd, head, (size_t)hl);
    write_full(s->out_fd, line, n);
    return;
  }
  memcpy(out, head, (size_t)hl);
  memcpy(out + hl, line, n);
  if (nl)
    out[(size_t)hl + n] = '\n';
  write_full(s->out_fd, out, (size_t)hl + n + (size_t)nl);
  free(out);
}

int lr_stream_read(struct lr_stream *s, int label)
{
  if (s->fd < 0)
    return 0;
  if (s->buf == NULL) {
    s->buf = malloc(LR_CHUNK);
    if (s->buf == NULL)
      return 1;
  }
  ssize_t n = read(s->fd, s->buf + s->len, LR_CHUNK - s->len);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return 1;
  if (n <= 0) {
    lr_stream_close(s, label);
    return 0;
  }
  s->len += (size_t)n;
  size_t start = 0;
  for (size_t i = 0; i < s->len; i++)
    if (s->buf[i] == '\n') {
      emit(s, label, s->buf + start, i + 1 - start, 0);
      start = i + 1;
    }
  if (start == 0 && s->len == LR_CHUNK) {
    /* An endless line: pass a part (its own line when labelled). */
    emit(s, label, s->buf, s->len, label);
    start = s->len;
  }
  memmove(s->buf, s->buf + start, s->len - start);
  s->len -= start;
  return 1;
}

void lr_stream_close(struct lr_stream *s, int label)
{
  if (s->len > 0)
    emit(s, label, s->buf, s->len, 1);
  s->len = 0;
  free(s->buf);
  s->buf = NULL;
  if (s->fd >= 0)
    close(s->fd);
  s->fd = -1;
}
