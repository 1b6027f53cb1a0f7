import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import javax.security.auth.x500.X500Principal;

/**
 * Reads DER-encoded X.500 names, one base64 line each, and prints for each
 * the UTF-8 bytes of X500Principal.getName() (RFC 2253), in base64: what
 * Kafka's DefaultKafkaPrincipalBuilder takes as a client certificate's
 * name; first the JDK's feature version. Run as a source file: java
 * X500Names.java.
 */
public final class X500Names {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.US_ASCII);
        Base64.Encoder enc = Base64.getEncoder();
        out.println(Runtime.version().feature());
        String line;
        while ((line = in.readLine()) != null) {
            String name = new X500Principal(Base64.getDecoder().decode(line)).getName();
            out.println(enc.encodeToString(name.getBytes(StandardCharsets.UTF_8)));
        }
    }
}
