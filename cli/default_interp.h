/* cli/default_interp.h: the interpreter a verb of worldd or world-publish
 * runs when --ailang-bin is omitted (one rule for both programs), and where
 * worldd audit finds its probe (the same rule). */
#ifndef WORLD_CLI_DEFAULT_INTERP_H
#define WORLD_CLI_DEFAULT_INTERP_H

/* The installed ailang-lite (WORLD_AILANG_LITE_DEFAULT, in pkglibexecdir)
 * when it is there; otherwise, from a build tree that was not installed,
 * the one built beside this program (cli/../interp/ailang-lite); else the
 * installed path, so the error names where it was looked for. */
const char *cli_default_ailang_bin(void);
/* The same rule for worldd audit's probe: $(pkglibexecdir)/world-probe,
 * else audit/world-probe of the build tree (worldd only). */
const char *cli_default_probe(void);

#endif
