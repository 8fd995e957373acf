// A LOCM bot in Java that answers PASS to every turn; it names itself on stderr once.
import java.io.BufferedReader;
import java.io.InputStreamReader;

public class PassBot {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        boolean first = true;
        while (in.readLine() != null) {  // player 0's line
            in.readLine();  // player 1's line
            int actions = Integer.parseInt(in.readLine().trim().split(" ")[1]);
            for (int i = 0; i < actions; i++) in.readLine();
            int cards = Integer.parseInt(in.readLine().trim());
            for (int i = 0; i < cards; i++) in.readLine();
            if (first) {
                first = false;
                System.err.println("java bot running as " + System.getProperty("user.name")
                    + " in " + System.getProperty("user.home"));
            }
            System.out.println("PASS");
            System.out.flush();
        }
    }
}
