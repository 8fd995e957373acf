/*
 * A minimal Legends of Code and Magic bot for versions 1.0, 1.2 and 1.5, in C.
 * Same behaviour as minimal_bot.py (docs/protocol.md explains every line):
 *   draft (1.0, 1.2): PICK the cheapest creature of the three (PICK 0 if none);
 *   constructed (1.5): CHOOSE two copies of the 15 cheapest creatures;
 *   battle: attack with every creature on the board (through the Guards first,
 *   then at the opponent), then summon the cheapest creatures that fit.
 *
 * Build: gcc -O2 -o minimal_bot minimal_bot.c
 * Run:   locm play -p1 ./minimal_bot -p2 builtin:random --version 1.5
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CARDS 130 /* 120 in the 1.5 constructed turn, at most 8 + 12 in battle */
#define LINE_LEN 256

typedef struct {
    int base_id, id, location, type, cost, attack, defense;
    char abilities[8]; /* "BCDGLW", '-' where absent */
    int my_health_change, opponent_health_change, card_draw;
    int area; /* 1.5 only: 0 Target, 1 Lane1, 2 Lane2 */
    int lane; /* -1 in hand; 0 in 1.0 (one board) */
} Card;

static Card cards[MAX_CARDS];
static int card_count, player_fields, card_fields;
static int me[5], opponent[5];

/* Reads one line into buf; returns 0 when the referee has closed stdin. */
static int read_line(char *buf) {
    return fgets(buf, LINE_LEN, stdin) != NULL;
}

static int parse_ints(const char *line, int *out, int max) {
    int n = 0, used;
    while (n < max && sscanf(line, "%d%n", &out[n], &used) == 1) {
        line += used;
        n++;
    }
    return n;
}

/* Reads one whole input block; returns 0 at the end of the game. */
static int read_turn(void) {
    char line[LINE_LEN];
    int opponent_hand, action_count, numbers[13];
    if (!read_line(line)) return 0;
    player_fields = parse_ints(line, me, 5); /* 5 fields in 1.0/1.2, 4 in 1.5 */
    if (!read_line(line)) return 0;
    parse_ints(line, opponent, 5);
    if (!read_line(line) || sscanf(line, "%d %d", &opponent_hand, &action_count) != 2) return 0;
    for (int i = 0; i < action_count; i++)
        if (!read_line(line)) return 0; /* e.g. "12 SUMMON 7 1": not used here */
    if (!read_line(line) || sscanf(line, "%d", &card_count) != 1) return 0;
    for (int i = 0; i < card_count; i++) {
        Card *c = &cards[i];
        char rest[LINE_LEN];
        int used;
        if (!read_line(line)) return 0;
        if (sscanf(line, "%d %d %d %d %d %d %d %7s%n", &c->base_id, &c->id, &c->location, &c->type,
                   &c->cost, &c->attack, &c->defense, c->abilities, &used) != 8)
            return 0;
        strcpy(rest, line + used);
        int extra = parse_ints(rest, numbers, 5); /* my/opp health change, draw, [area,] [lane] */
        card_fields = 8 + extra;
        c->my_health_change = numbers[0];
        c->opponent_health_change = numbers[1];
        c->card_draw = numbers[2];
        c->area = extra == 5 ? numbers[3] : 0;
        c->lane = extra >= 4 ? numbers[extra - 1] : 0;
    }
    return 1;
}

static int is_v15(void) { return player_fields == 4; }
static int is_v10(void) { return !is_v15() && card_fields == 11; }

static void draft(void) {
    int best = -1;
    for (int i = 0; i < card_count; i++)
        if (cards[i].type == 0 && (best < 0 || cards[i].cost < cards[best].cost)) best = i;
    printf("PICK %d\n", best < 0 ? 0 : best);
}

static void construct(void) {
    int taken[MAX_CARDS] = {0}, chosen = 0;
    char answer[2048] = "";
    while (chosen < 30) {
        int best = -1;
        for (int i = 0; i < card_count; i++)
            if (cards[i].type == 0 && !taken[i] && (best < 0 || cards[i].cost < cards[best].cost))
                best = i;
        if (best < 0) break;
        taken[best] = 1;
        for (int copy = 0; copy < 2; copy++) {
            char piece[32];
            snprintf(piece, sizeof piece, "%sCHOOSE %d", chosen ? ";" : "", cards[best].base_id);
            strcat(answer, piece);
            chosen++;
        }
    }
    if (chosen < 30) strcat(answer, chosen ? ";PASS" : "PASS"); /* PASS fills up to 30 */
    printf("%s\n", answer);
}

static void add_action(char *answer, const char *action) {
    if (answer[0]) strcat(answer, ";");
    strcat(answer, action);
}

static void battle(void) {
    int lanes = is_v10() ? 1 : 2, per_lane = lanes == 1 ? 6 : 3;
    int mana = me[1], count[2] = {0, 0};
    char answer[4096] = "", action[64];

    /* Attack: a Guard in the attacker's lane (1.0: anywhere) must be hit first. */
    for (int a = 0; a < card_count; a++) {
        Card *attacker = &cards[a];
        if (attacker->location != 1) continue;
        count[attacker->lane]++;
        Card *guard = NULL;
        for (int g = 0; g < card_count && !guard; g++)
            if (cards[g].location == -1 && cards[g].lane == attacker->lane &&
                strchr(cards[g].abilities, 'G'))
                guard = &cards[g];
        snprintf(action, sizeof action, "ATTACK %d %d", attacker->id, guard ? guard->id : -1);
        add_action(answer, action);
        if (!guard || attacker->attack == 0) continue;
        char *ward = strchr(guard->abilities, 'W');
        if (ward)
            *ward = '-'; /* the Ward absorbs the hit and is gone */
        else if (attacker->attack >= guard->defense || strchr(attacker->abilities, 'L'))
            guard->location = 2; /* dead: no longer on the board (2 = gone) */
        else
            guard->defense -= attacker->attack;
    }

    /* Summon the cheapest creatures that fit; 1.5 Lane1/Lane2 cards may add a copy. */
    for (;;) {
        int best = -1, lane = -1;
        for (int i = 0; i < card_count; i++)
            if (cards[i].location == 0 && cards[i].id >= 0 && cards[i].type == 0 &&
                cards[i].cost <= mana && (best < 0 || cards[i].cost < cards[best].cost))
                best = i;
        for (int l = 0; l < lanes && lane < 0; l++)
            if (count[l] < per_lane) lane = l;
        if (best < 0 || lane < 0) break;
        Card *card = &cards[best];
        mana -= card->cost;
        count[lane]++;
        if (card->area == 1 && count[lane] < per_lane) count[lane]++;
        else if (card->area == 2 && lanes == 2 && count[1 - lane] < per_lane) count[1 - lane]++;
        if (lanes == 1) snprintf(action, sizeof action, "SUMMON %d", card->id);
        else snprintf(action, sizeof action, "SUMMON %d %d", card->id, lane);
        add_action(answer, action);
        card->id = -1; /* summoned: out of the hand */
    }
    printf("%s\n", answer[0] ? answer : "PASS");
}

int main(void) {
    while (read_turn()) {
        int building = card_count > 0;
        for (int i = 0; i < card_count; i++)
            if (cards[i].id != -1) building = 0;
        if (building && is_v15()) construct();
        else if (building) draft();
        else battle();
        fflush(stdout); /* the referee waits for a whole line */
    }
    return 0;
}
