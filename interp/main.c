/* interp/main.c: placeholder until the ailang-lite issue lands. */
#include <stdio.h>
int main(void) { puts("AILANG-lite v0.0.0"); return 0; }
