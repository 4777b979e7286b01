// SPDX-License-Identifier: MIT
/*
 * tree_flags.c: the word behind tree_flags.h, on a MAP_SHARED anonymous page. Such a page
 * is inherited by fork() and shared from then on, and it needs no descriptor and no
 * environment variable, so the program sees nothing of it. It does not survive exec: a new
 * program starts its own tree, which bounds the warnings by the programs started, not by
 * the workers forked. (An environment variable would survive exec, but setting one in a
 * running multithreaded program is unsafe, and it changes what the program and its
 * children see; an inherited memfd would be a descriptor leaked into every exec'd child.)
 */
#include "tree_flags.h"

#include <stddef.h>
#include <sys/mman.h>

static _Atomic unsigned own_word;
static _Atomic(_Atomic unsigned *) shared_word;

_Atomic unsigned *tree_flags(void)
{
	_Atomic unsigned *word = atomic_load(&shared_word), *expected = NULL;
	void *page;

	if (word)
		return word;
	page = mmap(NULL, sizeof(unsigned), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		    -1, 0);
	word = page == MAP_FAILED ? &own_word : page;
	atomic_store(word, atomic_load(&own_word));
	if (!atomic_compare_exchange_strong(&shared_word, &expected, word)) {
		if (word != &own_word)
			munmap(page, sizeof(unsigned));
		return expected;
	}
	return word;
}
