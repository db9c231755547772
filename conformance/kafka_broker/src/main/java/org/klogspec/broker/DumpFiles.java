package org.klogspec.broker;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Kafka's own DumpLogSegments (kafka-dump-log) on many files in one JVM: a JVM start costs about
 * a second, a file a few milliseconds.
 *
 * <p>Usage: {@code DumpFiles [DumpLogSegments options...]}, the files on stdin, one path a line.
 * Each file is dumped by a separate call of DumpLogSegments.main with the given options plus
 * {@code --files PATH}, between the lines {@code ### klogspec-file PATH} and
 * {@code ### klogspec-end}. What the tool writes to stderr (index mismatches, non-consecutive
 * offsets, the messages of the exceptions it catches) comes on stdout too, each line after
 * {@code ### stderr }, so that it stays with its file. DumpLogSegments.main ends with Kafka's
 * Exit.exit(status): that is caught and printed as {@code ### klogspec-exit STATUS}; an
 * exception it lets through as {@code ### klogspec-error CLASS: MESSAGE}.
 * The class is looked up by name, because it moved: {@code kafka.tools.DumpLogSegments}
 * (Scala, kafka_2.13) in Kafka 4.0, {@code org.apache.kafka.tools.DumpLogSegments} (Java,
 * kafka-tools) later.
 */
public final class DumpFiles {
    private static final String[] TOOL_CLASSES = {
        "org.apache.kafka.tools.DumpLogSegments", "kafka.tools.DumpLogSegments"
    };
    private static final String[] EXIT_CLASSES = {
        "org.apache.kafka.common.utils.internals.Exit", "org.apache.kafka.common.utils.Exit"
    };

    private DumpFiles() {}

    public static void main(String[] args) throws Exception {
        Method dump = firstClass(TOOL_CLASSES).getMethod("main", String[].class);
        System.out.println("### klogspec-tool " + dump.getDeclaringClass().getName());
        refuseExit();
        PrintStream out = System.out;
        System.setErr(new PrintStream(new LinePrefix(out, "### stderr "), true, StandardCharsets.UTF_8));
        BufferedReader files =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String path = files.readLine(); path != null; path = files.readLine()) {
            if (!path.isEmpty()) {
                dumpOne(dump, args, path);
            }
        }
    }

    private static void dumpOne(Method dump, String[] options, String path) {
        List<String> argv = new ArrayList<>(Arrays.asList(options));
        argv.add("--files");
        argv.add(path);
        System.out.println("### klogspec-file " + path);
        try {
            dump.invoke(null, (Object) argv.toArray(new String[0]));
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            System.err.flush();
            System.out.flush();
            if (cause instanceof ExitCalled exit) {
                System.out.println("### klogspec-exit " + exit.status);
            } else {
                System.out.println("### klogspec-error " + cause.getClass().getName() + ": "
                        + String.valueOf(cause.getMessage()).replace('\n', ' '));
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        System.err.flush();
        System.out.flush();
        System.out.println("### klogspec-end");
        System.out.flush();
    }

    /** Kafka's tools end the JVM through Exit.exit on bad input; here that ends one file. */
    private static void refuseExit() throws Exception {
        Class<?> exit = firstClass(EXIT_CLASSES);
        Class<?> procedure = Class.forName(exit.getName() + "$Procedure");
        Object thrower = Proxy.newProxyInstance(procedure.getClassLoader(),
                new Class<?>[] {procedure}, (proxy, method, margs) -> {
                    if (method.getDeclaringClass() == Object.class) {
                        return method.getName().equals("hashCode") ? 0 : method.getName();
                    }
                    throw new ExitCalled((Integer) margs[0]);
                });
        exit.getMethod("setExitProcedure", procedure).invoke(null, thrower);
        exit.getMethod("setHaltProcedure", procedure).invoke(null, thrower);
    }

    /** Kafka's Exit.exit, turned into an exception that ends one file's dump. */
    private static final class ExitCalled extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int status;

        ExitCalled(int status) {
            super("Exit.exit(" + status + ")", null, false, false);
            this.status = status;
        }
    }

    /** Writes each line to {@code out} after {@code prefix}. */
    private static final class LinePrefix extends OutputStream {
        private final PrintStream out;
        private final byte[] prefix;
        private boolean lineStart = true;

        LinePrefix(PrintStream out, String prefix) {
            this.out = out;
            this.prefix = prefix.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public void write(int b) {
            if (lineStart) {
                out.write(prefix, 0, prefix.length);
            }
            out.write(b);
            lineStart = b == '\n';
        }

        @Override
        public void flush() {
            out.flush();
        }
    }

    private static Class<?> firstClass(String[] names) throws ClassNotFoundException {
        for (String name : names) {
            try {
                return Class.forName(name);
            } catch (ClassNotFoundException e) {
                // the other release's name
            }
        }
        throw new ClassNotFoundException(String.join(" or ", names));
    }
}
