/* broker/turn.c: see turn.h. A fixed table of slots under one mutex: the
 * number of episodes with an effect running at once is bounded by the call
 * workers, so a linear search is as fast as a map and needs no allocation. */
#include "broker/turn.h"
#include "store/pause.h"
#include <pthread.h>
#include <string.h>

#define TURN_SLOTS 512

struct turn {
	char episode[BROKER_TURN_KEY_MAX + 1]; /* "" = slot free */
	int busy;                              /* an effect of the episode runs */
	int waiters;                           /* threads waiting for the turn */
	pthread_cond_t cv;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slot_freed = PTHREAD_COND_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct turn slots[TURN_SLOTS];

static void init_slots(void)
{
	for (int i = 0; i < TURN_SLOTS; i++) pthread_cond_init(&slots[i].cv, NULL);
}

static void key_of(const char *episode, char key[BROKER_TURN_KEY_MAX + 1])
{
	size_t n = strnlen(episode ? episode : "", BROKER_TURN_KEY_MAX + 1);
	if (n == 0 || n > BROKER_TURN_KEY_MAX) { strcpy(key, "?"); return; }
	memcpy(key, episode, n);
	key[n] = '\0';
}

static struct turn *find(const char *key)
{
	for (int i = 0; i < TURN_SLOTS; i++)
		if (slots[i].episode[0] && strcmp(slots[i].episode, key) == 0) return &slots[i];
	return NULL;
}

void broker_turn_take(const char *episode)
{
	char key[BROKER_TURN_KEY_MAX + 1];
	key_of(episode, key);
	pthread_once(&once, init_slots);
	pthread_mutex_lock(&mu);
	for (;;) {
		struct turn *t = find(key);
		if (t) {
			/* Another effect of this episode runs: wait for it. The slot
			 * stays claimed while anyone waits (give() frees it only when
			 * nobody does). The pause point lets a race test see the wait. */
			t->waiters++;
			pthread_mutex_unlock(&mu);
			world_pause("effect.waiting_turn");
			pthread_mutex_lock(&mu);
			while (t->busy) pthread_cond_wait(&t->cv, &mu);
			t->waiters--;
			t->busy = 1;
			break;
		}
		for (int i = 0; i < TURN_SLOTS && !t; i++)
			if (!slots[i].episode[0]) t = &slots[i];
		if (t) {
			memcpy(t->episode, key, sizeof key);
			t->busy = 1;
			t->waiters = 0;
			break;
		}
		pthread_cond_wait(&slot_freed, &mu);
	}
	pthread_mutex_unlock(&mu);
}

void broker_turn_give(const char *episode)
{
	char key[BROKER_TURN_KEY_MAX + 1];
	key_of(episode, key);
	pthread_mutex_lock(&mu);
	struct turn *t = find(key);
	if (t) {
		t->busy = 0;
		if (t->waiters > 0) {
			pthread_cond_signal(&t->cv);
		} else {
			t->episode[0] = '\0';
			pthread_cond_signal(&slot_freed);
		}
	}
	pthread_mutex_unlock(&mu);
}
