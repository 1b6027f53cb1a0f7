// Interop runs the JDK's own implementations of what package checkpoint
// re-implements, for java_test.go to compare against: java.util.Properties
// load/store, java.util.Base64 (as Kafka's Uuid uses it), BufferedReader
// line splitting, String.split and Integer/Long parsing, Date.toString.
//
// Usage: java Interop.java <command file>. Each line of the command file is
// "<command> <argument>..." with byte strings in hex ("-" for empty); each
// command prints exactly one line. Written for kafkalite's tests; not part
// of the library.
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

public class Interop {
    static final HexFormat HEX = HexFormat.of();

    static byte[] unhex(String s) {
        return s.equals("-") ? new byte[0] : HEX.parseHex(s);
    }

    // hex returns s in UTF-8, hex-encoded, with unpaired surrogates (which
    // UTF-8 cannot hold) replaced by U+FFFD, as Go decodes them.
    static String hex(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                sb.append(c).append(s.charAt(++i));
            } else if (Character.isSurrogate(c)) {
                sb.append('\uFFFD');
            } else {
                sb.append(c);
            }
        }
        byte[] b = sb.toString().getBytes(StandardCharsets.UTF_8);
        return b.length == 0 ? "-" : HEX.formatHex(b);
    }

    static String fields(String[] parts) {
        StringBuilder sb = new StringBuilder().append(parts.length);
        for (String p : parts) sb.append(' ').append(hex(p));
        return sb.toString();
    }

    static String run(String[] a) throws Exception {
        switch (a[0]) {
            case "load": {
                // As Kafka's PropertiesUtils.readPropertiesFile: load(InputStream).
                Properties p = new Properties();
                try {
                    p.load(new ByteArrayInputStream(unhex(a[1])));
                } catch (IllegalArgumentException e) {
                    return "error";
                }
                TreeMap<String, String> sorted = new TreeMap<>();
                for (String k : p.stringPropertyNames()) sorted.put(k, p.getProperty(k));
                StringBuilder sb = new StringBuilder("ok ").append(sorted.size());
                sorted.forEach((k, v) -> sb.append(' ').append(hex(k)).append(' ').append(hex(v)));
                return sb.toString();
            }
            case "store": {
                // As Kafka's PropertiesUtils.writePropertiesFile: store(PrintWriter over UTF-8, "").
                Properties p = new Properties();
                for (int i = 1; i + 1 < a.length; i += 2) {
                    p.setProperty(new String(unhex(a[i]), StandardCharsets.UTF_8), new String(unhex(a[i + 1]), StandardCharsets.UTF_8));
                }
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                try (PrintWriter pw = new PrintWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8))) {
                    p.store(pw, "");
                }
                return out.size() == 0 ? "-" : HEX.formatHex(out.toByteArray());
            }
            case "store-file": {
                Properties p = new Properties();
                for (int i = 2; i + 1 < a.length; i += 2) {
                    p.setProperty(new String(unhex(a[i]), StandardCharsets.UTF_8), new String(unhex(a[i + 1]), StandardCharsets.UTF_8));
                }
                try (FileOutputStream fos = new FileOutputStream(new String(unhex(a[1]), StandardCharsets.UTF_8));
                     PrintWriter pw = new PrintWriter(new OutputStreamWriter(fos, StandardCharsets.UTF_8))) {
                    p.store(pw, "");
                }
                return "ok";
            }
            case "b64":
                return Base64.getUrlEncoder().withoutPadding().encodeToString(unhex(a[1]));
            case "uuid": {
                // The checks of Kafka's Uuid.fromString, on the JDK decoder.
                String s = new String(unhex(a[1]), StandardCharsets.UTF_8);
                if (s.length() > 24) return "error";
                byte[] b;
                try {
                    b = Base64.getUrlDecoder().decode(s);
                } catch (IllegalArgumentException e) {
                    return "error";
                }
                return b.length == 16 ? "ok " + HEX.formatHex(b) : "error";
            }
            case "lines": {
                BufferedReader r = new BufferedReader(new InputStreamReader(new ByteArrayInputStream(unhex(a[1])), StandardCharsets.UTF_8));
                StringBuilder sb = new StringBuilder("lines");
                for (String line = r.readLine(); line != null; line = r.readLine()) sb.append(' ').append(hex(line));
                return sb.toString();
            }
            case "split":
                return fields(new String(unhex(a[1]), StandardCharsets.UTF_8).split("\\s+"));
            case "splitkv":
                return fields(new String(unhex(a[1]), StandardCharsets.UTF_8).split(":\\s+", 2));
            case "int":
                try {
                    return "ok " + Integer.parseInt(new String(unhex(a[1]), StandardCharsets.UTF_8));
                } catch (NumberFormatException e) {
                    return "error";
                }
            case "long":
                try {
                    return "ok " + Long.parseLong(new String(unhex(a[1]), StandardCharsets.UTF_8));
                } catch (NumberFormatException e) {
                    return "error";
                }
            case "date": {
                TimeZone saved = TimeZone.getDefault();
                TimeZone.setDefault(TimeZone.getTimeZone(a[2]));
                try {
                    return new Date(Long.parseLong(a[1])).toString();
                } finally {
                    TimeZone.setDefault(saved);
                }
            }
            default:
                throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }

    public static void main(String[] args) throws Exception {
        StringBuilder out = new StringBuilder();
        for (String line : Files.readAllLines(Paths.get(args[0]))) {
            if (line.isEmpty()) continue;
            out.append(run(line.split(" "))).append('\n');
        }
        System.out.print(out);
    }
}
