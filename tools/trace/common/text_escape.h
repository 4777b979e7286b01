/* SPDX-License-Identifier: MIT */
/*
 * text_escape.h: the one place where text from outside (thread and process names, command
 * lines, device names, bad flag values) becomes text for a terminal. A process chooses its
 * own name, and a name can hold a newline, which would forge a row, or an escape sequence,
 * which root's terminal would obey. So every such byte is shown as a visible escape, the
 * way bash writes $'...' strings: \n \t \r \a \b \f \v \e, a backslash as \\, any other
 * control byte and every byte that is not valid UTF-8 as \xNN, and the Unicode controls a
 * terminal or editor would act on (C1 controls, bidi overrides, line and paragraph
 * separators) as \uHHHH. Everything else, printable ASCII and valid UTF-8, passes as is,
 * so the output is valid UTF-8 and ordinary names look ordinary. JSON has its own rule
 * (json_text.h); both use the UTF-8 decoder here.
 */
#ifndef IOTIER_TEXT_ESCAPE_H
#define IOTIER_TEXT_ESCAPE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/*
 * The length of the valid UTF-8 sequence at @s (at most @left bytes, @left > 0), or 0 when
 * the byte there starts none (RFC 3629: no overlong forms, no surrogates, nothing past
 * U+10FFFF).
 */
size_t utf8_seq_len(const unsigned char *s, size_t left);

/*
 * Write @s escaped into @out (size @len, always NUL-terminated when @len > 0; an escape is
 * never cut in half). Returns the length the whole escaped text needs, without the NUL, so
 * a return >= @len means it was cut.
 */
size_t text_escape(char *out, size_t len, const char *s);

/* @s escaped, in memory the caller frees; NULL when out of memory. */
char *text_escape_dup(const char *s);

/* Write @s escaped to @out. */
void text_escape_fputs(const char *s, FILE *out);

/* printf, then escape the whole result: for one-line messages that quote outside values. */
void text_escape_vfprintf(FILE *out, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#endif
