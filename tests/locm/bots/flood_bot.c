/* Plays like simple_bot.py (summon what it can afford, attack the face),
 * but writes 256 KiB to stderr before each answer and, with "flood" as argument,
 * 1 MiB of extra stdout lines after its first answer: the referee must neither block
 * nor keep it all. */
#include <stdio.h>
#include <string.h>

static char line[65536];

static int next_line(void) { return fgets(line, sizeof line, stdin) != NULL; }

int main(int argc, char **argv) {
    int flood = argc > 1 && strcmp(argv[1], "flood") == 0;
    char noise[1024];
    memset(noise, 'e', sizeof noise - 1);
    noise[sizeof noise - 1] = '\0';
    for (int turn = 0;; turn++) {
        int health, mana, hand, actions, count;
        if (!next_line() || sscanf(line, "%d %d", &health, &mana) != 2) return 0;
        if (!next_line()) return 0; /* opponent */
        if (!next_line() || sscanf(line, "%d %d", &hand, &actions) != 2) return 0;
        for (int i = 0; i < actions; i++) if (!next_line()) return 0;
        if (!next_line() || sscanf(line, "%d", &count) != 1) return 0;
        char answer[4096] = "";
        int lane = 0;
        for (int i = 0; i < count; i++) {
            int base, id, location, type, cost;
            if (!next_line()) return 0;
            sscanf(line, "%d %d %d %d %d", &base, &id, &location, &type, &cost);
            char action[64] = "";
            if (mana > 0 && location == 0 && type == 0 && cost <= mana) {
                snprintf(action, sizeof action, "SUMMON %d %d;", id, lane);
                mana -= cost;
                lane = 1 - lane;
            } else if (mana > 0 && location == 1) {
                snprintf(action, sizeof action, "ATTACK %d -1;", id);
            }
            strncat(answer, action, sizeof answer - strlen(answer) - 1);
        }
        for (int i = 0; i < 256; i++) fputs(noise, stderr);
        printf("%s\n", answer[0] ? answer : "PASS");
        if (flood && turn == 0)
            for (int i = 0; i < 1024; i++) printf("PASS %s\n", noise);
        fflush(stdout);
    }
}
