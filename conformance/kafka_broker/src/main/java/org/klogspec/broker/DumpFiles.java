package org.klogspec.broker;

import java.io.BufferedReader;
import java.io.InputStreamReader;
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
 * {@code ### klogspec-end}; a call that throws (or calls Kafka's Exit) prints
 * {@code ### klogspec-error MESSAGE} before the end line, and the next file is dumped.
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
            System.out.flush();
            System.out.println("### klogspec-error " + cause.getClass().getName() + ": "
                    + String.valueOf(cause.getMessage()).replace('\n', ' '));
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
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
                    throw new IllegalStateException("Exit.exit(" + margs[0] + ", " + margs[1] + ")");
                });
        exit.getMethod("setExitProcedure", procedure).invoke(null, thrower);
        exit.getMethod("setHaltProcedure", procedure).invoke(null, thrower);
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
