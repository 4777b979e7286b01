// SPDX-License-Identifier: MIT
/*
 * check-settings.c: the settings table (shim/core/settings.def) against what is built from it
 * and what documents it. Every key is named in README.md's settings table, in the man page
 * and in docs/shim.md; every flag is in the man page and in the CLI's help; every default
 * parses with the shim's own parser. The checker is also run on a copy of the README with
 * one key cut out, which it must catch.
 * Usage: check-settings README.md docs/iotier.1 docs/shim.md
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/settings.def"
#include "launch/shim_options.h"
#include "check_main.h"

static const struct {
	const char *key, *flag, *default_value, *help;
} rows[] = {
#define ROW(id, key, short, flag, kind, parse, default_value, help) \
	{ key, flag, default_value, help },
	IOTIER_SETTINGS(ROW)
#undef ROW
};
#define N_ROWS (sizeof(rows) / sizeof(rows[0]))

enum { DOC_README, DOC_MAN, DOC_SHIM, N_DOCS };
static const char *doc_paths[N_DOCS];
static char *docs[N_DOCS];

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0;

	ck_assert_msg(f, "cannot open %s", path);
	ck_assert_int_eq(getdelim(&text, &len, '\0', f) > 0, 1);
	fclose(f);
	return text;
}

static void load_docs(void)
{
	for (int i = 0; i < N_DOCS; i++)
		if (!docs[i])
			docs[i] = slurp(doc_paths[i]);
}

static bool word_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* @word in @text, not as the start of a longer key (IOTIER_LOW in IOTIER_LOW_CLASS). */
static bool names_key(const char *text, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = strstr(text, word); p; p = strstr(p + 1, word))
		if ((p == text || !word_char(p[-1])) && !word_char(p[len]))
			return true;
	return false;
}

/* A row of a Markdown table for @key: a line starting "| `KEY` |". */
static bool table_row(const char *text, const char *key)
{
	char row[64];

	snprintf(row, sizeof(row), "\n| `%s` |", key);
	return strstr(text, row) != NULL;
}

/* The flag as roff writes it: every '-' escaped, "\-\-low\-rate". */
static bool names_flag_roff(const char *text, const char *flag)
{
	char roff[96] = "\\-\\-";
	size_t n = strlen(roff);

	for (const char *p = flag; *p && n + 3 < sizeof(roff); p++) {
		if (*p == '-')
			roff[n++] = '\\';
		roff[n++] = *p;
	}
	roff[n] = '\0';
	return strstr(text, roff) != NULL;
}

/* The keys the README's settings table (@text, @label) lacks, counted; each one printed. */
static unsigned missing_from_readme(const char *text, const char *label)
{
	unsigned missing = 0;

	for (size_t i = 0; i < N_ROWS; i++)
		if (!table_row(text, rows[i].key)) {
			fprintf(stderr, "%s: no settings table row for %s\n", label, rows[i].key);
			missing++;
		}
	return missing;
}

START_TEST(test_readme_table)
{
	ck_assert_uint_eq(missing_from_readme(docs[DOC_README], doc_paths[DOC_README]), 0);
}
END_TEST

START_TEST(test_man_page)
{
	for (size_t i = 0; i < N_ROWS; i++) {
		ck_assert_msg(names_key(docs[DOC_MAN], rows[i].key), "iotier.1 does not name %s",
			      rows[i].key);
		ck_assert_msg(names_flag_roff(docs[DOC_MAN], rows[i].flag),
			      "iotier.1 does not name --%s", rows[i].flag);
	}
}
END_TEST

START_TEST(test_shim_doc)
{
	for (size_t i = 0; i < N_ROWS; i++)
		ck_assert_msg(table_row(docs[DOC_SHIM], rows[i].key),
			      "docs/shim.md has no settings table row for %s", rows[i].key);
}
END_TEST

/* The help is built from the same rows; check each row's lines name its own flag. */
START_TEST(test_help)
{
	static const char help[] = SHIM_OPTIONS_HELP;
	char flag[64];

	for (size_t i = 0; i < N_ROWS; i++) {
		snprintf(flag, sizeof(flag), "--%s ", rows[i].flag);
		ck_assert_msg(strstr(rows[i].help, flag),
			      "the help of %s does not show --%s", rows[i].key, rows[i].flag);
		ck_assert_ptr_nonnull(strstr(help, rows[i].help));
	}
}
END_TEST

static const char *default_of(const char *key, void *ctx)
{
	(void)ctx;
	for (size_t i = 0; i < N_ROWS; i++)
		if (!strcmp(rows[i].key, key))
			return rows[i].default_value;
	return NULL;
}

/* config_defaults() ignores a parse error; a default that does not parse must fail here. */
START_TEST(test_defaults_parse)
{
	static struct config given, defaults;
	char err[RULE_ERROR_MAX + 64] = "";

	ck_assert_msg(config_load(&given, default_of, NULL, NULL, err, sizeof(err)) == 0, "%s",
		      err);
	config_defaults(&defaults);
	/* the one difference a given key makes: a weight asked for is warned of when the
	 * kernel has no weight file, the default's absence is not (cgroup_tier.c) */
	ck_assert(given.low_weight_given && !defaults.low_weight_given);
	given.low_weight_given = false;
	ck_assert_int_eq(memcmp(&given, &defaults, sizeof(given)), 0);
	ck_assert_int_eq(defaults.low_weight, LOW_WEIGHT_DEFAULT);
}
END_TEST

/* The checker itself: a README whose table lost the IOTIER_LOW_RATE row must be caught. */
START_TEST(test_missing_key_caught)
{
	char *copy = strdup(docs[DOC_README]);
	char *row = strstr(copy, "\n| `IOTIER_LOW_RATE` |");

	ck_assert_ptr_nonnull(row);
	row[3] = 'X'; /* "| `XOTIER_LOW_RATE` |" */
	ck_assert_uint_eq(missing_from_readme(copy, "a README without it (as expected)"), 1);
	ck_assert(!names_key("IOTIER_LOW_CLASS and IOTIER_LOWER", "IOTIER_LOW"));
	ck_assert(names_flag_roff(".BI \\-\\-low\\-rate \" BYTES\"", "low-rate"));
	free(copy);
}
END_TEST

static Suite *settings_suite(void)
{
	Suite *s = suite_create("settings");
	TCase *documented = tcase_create("documented");
	TCase *built = tcase_create("built");

	tcase_add_unchecked_fixture(documented, load_docs, NULL);
	tcase_add_test(documented, test_readme_table);
	tcase_add_test(documented, test_man_page);
	tcase_add_test(documented, test_shim_doc);
	tcase_add_test(documented, test_missing_key_caught);
	suite_add_tcase(s, documented);

	tcase_add_test(built, test_help);
	tcase_add_test(built, test_defaults_parse);
	suite_add_tcase(s, built);
	return s;
}

int main(int argc, char **argv)
{

	if (argc != 1 + N_DOCS) {
		fprintf(stderr, "usage: %s README.md iotier.1 shim.md\n", argv[0]);
		return 2;
	}
	for (int i = 0; i < N_DOCS; i++)
		doc_paths[i] = argv[1 + i];
	return check_run_suite(settings_suite());
}
