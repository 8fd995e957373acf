/* A Shared Deck bot in C, to show that the protocol needs nothing but a socket.
 *
 *   cc -O2 -o bot examples/shared_deck/bot.c
 *   SHARED_DECK_SECRET=... ./bot 127.0.0.1 7000 NAME [TURNS]
 *
 * Every turn, in every match where it may move: end the blocking phase, draw, tap its
 * creatures without attack for mana, play what it can afford, attack with the rest.
 * It stops after TURNS turns (default: never) or when the server closes the connection.
 */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CARDS 128
#define LINE 65536
#define MAX_MATCHES 16384

struct card { int id, attack, hp, hp_max, cost, mana, active; char type; };

static FILE *in, *out;

static void read_line(char *line) {
    if (!fgets(line, LINE, in)) { fprintf(stderr, "server closed the connection\n"); exit(0); }
    line[strcspn(line, "\r\n")] = 0;
}

/* Send one command; returns 1 on OK, 0 on ERR (the error line is not an error for us). */
static int ask(const char *command, char *first) {
    fprintf(out, "%s\n", command);
    fflush(out);
    read_line(first);
    return strcmp(first, "OK") == 0;
}

static int parse_card(const char *line, struct card *card) {
    card->active = 0;
    return sscanf(line, "%d %c %d %d %d %d %d %d", &card->id, &card->type, &card->attack,
                  &card->hp, &card->hp_max, &card->cost, &card->mana, &card->active) >= 7;
}

/* GET_HANDS or GET_BOARD: read "mine theirs" and keep only my cards. */
static int my_cards(const char *command, struct card *cards) {
    char line[LINE];
    int mine = 0, theirs = 0, kept = 0;
    if (!ask(command, line)) return 0;
    read_line(line);
    sscanf(line, "%d %d", &mine, &theirs);
    for (int i = 0; i < mine + theirs; i++) {
        read_line(line);
        if (i < mine && kept < MAX_CARDS && parse_card(line, &cards[kept])) kept++;
    }
    return kept;
}

static void play_match(int match) {
    char command[128], line[LINE];
    struct card board[MAX_CARDS], hand[MAX_CARDS];
    int mana = 0;

    snprintf(command, sizeof command, "FINISH_BLOCK %d", match);
    ask(command, line);
    snprintf(command, sizeof command, "DRAW_CARD %d", match);
    if (ask(command, line)) read_line(line);

    snprintf(command, sizeof command, "GET_BOARD %d", match);
    int creatures = my_cards(command, board);
    for (int i = 0; i < creatures; i++) {
        if (board[i].active && board[i].attack == 0 && board[i].mana > 0) {
            snprintf(command, sizeof command, "ADD_MANA %d %d", match, board[i].id);
            if (ask(command, line)) { mana += board[i].mana; board[i].active = 0; }
        }
    }
    snprintf(command, sizeof command, "GET_HANDS %d", match);
    int cards = my_cards(command, hand);
    for (int i = 0; i < cards; i++) {
        int target = hand[i].type == 'C' ? -1 : hand[i].type == 'D' ? -6
                   : (hand[i].type == 'H' || hand[i].type == 'T') ? -5 : 0;
        if (target == 0 || hand[i].cost > mana) continue;
        snprintf(command, sizeof command, "PLAY_CARD %d %d %d", match, hand[i].id, target);
        if (ask(command, line)) mana -= hand[i].cost;
    }
    for (int i = 0; i < creatures; i++) {
        if (board[i].active && board[i].attack > 0) {
            snprintf(command, sizeof command, "ATTACK %d %d", match, board[i].id);
            ask(command, line);
        }
    }
}

int main(int argc, char **argv) {
    const char *secret = getenv("SHARED_DECK_SECRET");
    if (argc < 4 || !secret) {
        fprintf(stderr, "usage: SHARED_DECK_SECRET=... %s HOST PORT NAME [TURNS]\n", argv[0]);
        return 2;
    }
    long turns = argc > 4 ? atol(argv[4]) : -1;

    struct addrinfo hints = {0}, *address;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(argv[1], argv[2], &hints, &address) != 0) { perror("getaddrinfo"); return 1; }
    int fd = socket(address->ai_family, address->ai_socktype, address->ai_protocol);
    if (fd < 0 || connect(fd, address->ai_addr, address->ai_addrlen) != 0) {
        perror("connect");
        return 1;
    }
    freeaddrinfo(address);
    in = fdopen(fd, "r");
    out = fdopen(dup(fd), "w");

    char line[LINE];
    read_line(line);                                  /* LOGIN */
    if (ask(argv[3], line), strcmp(line, "PASSWORD") != 0) return 1;
    if (!ask(secret, line)) { fprintf(stderr, "login refused: %s\n", line); return 1; }

    for (long turn = 0; turns < 0 || turn < turns; turn++) {
        static int matches[MAX_MATCHES];
        int count = 0;
        if (ask("GET_MY_MATCHES", line)) {
            read_line(line);
            count = atoi(line);
            read_line(line);
            char *word = strtok(line, " ");
            int seen = 0;
            for (; seen < count && seen < MAX_MATCHES && word; seen++, word = strtok(NULL, " "))
                matches[seen] = atoi(word);
            count = seen;
        }
        for (int i = 0; i < count; i++) {
            char command[64], info[LINE];
            snprintf(command, sizeof command, "GET_TURN_INFO %d", matches[i]);
            if (ask(command, info)) {
                read_line(info);
                if (info[0] == '1') play_match(matches[i]);
            }
        }
        ask("WAIT", line);                            /* OK at once... */
        read_line(line);                              /* ...and OK when the next turn starts */
    }
    return 0;
}
