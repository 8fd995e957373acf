// A LOCM bot in C# that answers PASS to every turn; it names itself on stderr once.
using System;

public class PassBot {
    public static void Main() {
        bool first = true;
        while (Console.ReadLine() != null) {  // player 0's line
            Console.ReadLine();  // player 1's line
            int actions = int.Parse(Console.ReadLine().Trim().Split(' ')[1]);
            for (int i = 0; i < actions; i++) Console.ReadLine();
            int cards = int.Parse(Console.ReadLine().Trim());
            for (int i = 0; i < cards; i++) Console.ReadLine();
            if (first) {
                first = false;
                Console.Error.WriteLine("csharp bot running as " + Environment.UserName);
            }
            Console.WriteLine("PASS");
            Console.Out.Flush();
        }
    }
}
