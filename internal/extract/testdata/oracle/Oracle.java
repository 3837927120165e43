import com.sun.source.tree.*;
import com.sun.source.util.*;
import javax.tools.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

public class Oracle {
    public static void main(String[] args) throws Exception {
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        StringBuilder out = new StringBuilder("[");
        boolean firstFile = true;
        for (String f : Files.readAllLines(Path.of(args[0]))) {
            String text = Files.readString(Path.of(f), StandardCharsets.UTF_8);
            int[] b = new int[text.length() + 1];
            int n = 0;
            for (int i = 0; i < text.length(); i++) {
                b[i] = n;
                char c = text.charAt(i);
                if (c < 0x80) n += 1;
                else if (c < 0x800) n += 2;
                else if (Character.isHighSurrogate(c) && i + 1 < text.length()) { n += 4; b[i + 1] = n; i++; continue; }
                else n += 3;
            }
            b[text.length()] = n;
            JavaFileObject fo = new SimpleJavaFileObject(Path.of(f).toUri(), JavaFileObject.Kind.SOURCE) {
                public CharSequence getCharContent(boolean ignore) { return text; }
            };
            JavacTask task = (JavacTask) compiler.getTask(null, null, d -> {}, List.of("-proc:none", "-XDallowStringFolding=false"), null, List.of(fo));
            List<String> items = new ArrayList<>();
            for (CompilationUnitTree cu : task.parse()) {
                SourcePositions sp = Trees.instance(task).getSourcePositions();
                new TreeScanner<Void, Void>() {
                    public Void visitLiteral(LiteralTree t, Void v) {
                        if (t.getKind() == Tree.Kind.STRING_LITERAL) {
                            int s = (int) sp.getStartPosition(cu, t), e = (int) sp.getEndPosition(cu, t);
                            String val = (String) t.getValue();
                            byte[] bytes = val.getBytes(StandardCharsets.UTF_8);
                            boolean ok = new String(bytes, StandardCharsets.UTF_8).equals(val);
                            items.add("{\"start\":" + b[s] + ",\"end\":" + b[e] + ",\"value\":" + (ok ? "\"" + Base64.getEncoder().encodeToString(bytes) + "\"" : "null") + "}");
                        }
                        return null;
                    }
                }.scan(cu, null);
            }
            if (!firstFile) out.append(",");
            firstFile = false;
            out.append("{\"file\":\"").append(f).append("\",\"strings\":[").append(String.join(",", items)).append("]}");
        }
        out.append("]");
        System.out.print(out);
    }
}
