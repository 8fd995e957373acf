// A LOCM bot in C++ that answers PASS to every turn; it names itself on stderr once.
#include <iostream>
#include <sstream>
#include <string>

int main() {
    std::string line;
    bool first = true;
    while (std::getline(std::cin, line)) {  // player 0's line
        std::getline(std::cin, line);        // player 1's line
        std::getline(std::cin, line);        // opponent's hand size and action count
        std::istringstream opponent(line);
        int hand = 0, actions = 0;
        opponent >> hand >> actions;
        for (int i = 0; i < actions; i++) std::getline(std::cin, line);
        std::getline(std::cin, line);
        int cards = std::stoi(line);
        for (int i = 0; i < cards; i++) std::getline(std::cin, line);
        if (first) {
            first = false;
            std::cerr << "cpp bot running" << std::endl;
        }
        std::cout << "PASS" << std::endl;
    }
    return 0;
}
