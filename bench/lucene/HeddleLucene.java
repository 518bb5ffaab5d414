// Lucene as a child engine of heddle-bench (docs/DECISIONS.md, "Lucene as a second peer").
//
// Three commands, all written against Lucene's public API only:
//
//   build --index DIR --analysis matched --docs FILE --threads N --k1 X --b Y --ram-mb M
//         --segments S
//       indexes a file of pre-analysed documents (one a line: id TAB title TAB tokens,
//       id and title escaped as in the protocol) and prints its stats as one JSON line.
//   build --index DIR --analysis native --corpus FILE (the same other flags)
//       indexes a BEIR corpus.jsonl with Lucene's EnglishAnalyzer over title + " " + text.
//   serve --index DIR --analysis matched|native --threads N --k1 X --b Y
//       opens the index and answers the child-engine protocol on stdin/stdout
//       (bench/src/protocol.rs is its other end and its specification): a search's query
//       is heddle's tokens (matched) or the query's text, analysed here (native).
//   quality --corpus FILE --queries FILE --qrels FILE --index DIR --out RUN --k1 X --b Y
//       Lucene's own BM25 baseline on a BEIR set, as Anserini builds it (make
//       quality-lucene): Lucene's EnglishAnalyzer over title + " " + text, a bag of words
//       per query, the query's own document removed, 1,000 hits, a TREC run file out.
//
// Matched analysis: heddle's analyzer made the tokens; Lucene splits them on whitespace
// (WhitespaceAnalyzer) and changes nothing, so both engines index the same terms.
// Native analysis: Lucene's EnglishAnalyzer makes its own tokens of the raw text, as in
// `quality` (heddle then runs its lucene-english preset); the engines answer different
// questions. --analysis is matched when absent.
//
// Compiled by the Makefile with `javac -cp <the Anserini fat jar>`; never by the root
// workspace, `make test` or CI.

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.util.stream.Stream;

import org.apache.lucene.analysis.core.WhitespaceAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.SegmentInfos;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.CollectionStatistics;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.MMapDirectory;
import org.apache.lucene.util.Version;

public final class HeddleLucene {
    static final String FLAT = "flat";

    public static void main(String[] argv) throws Exception {
        if (argv.length == 0) {
            fail("usage: HeddleLucene build|serve --index DIR ...");
        }
        Map<String, String> a = flags(argv);
        switch (argv[0]) {
            case "build" -> build(a);
            case "serve" -> serve(a);
            case "quality" -> quality(a);
            default -> fail("unknown command " + argv[0] + " (build, serve or quality)");
        }
    }

    // ---- build ----

    static void build(Map<String, String> a) throws Exception {
        long started = System.nanoTime();
        Path dir = Paths.get(need(a, "index"));
        boolean nativeAnalysis = isNative(a);
        Path source = Paths.get(need(a, nativeAnalysis ? "corpus" : "docs"));
        int threads = Math.max(1, Integer.parseInt(need(a, "threads")));
        int segments = Integer.parseInt(need(a, "segments"));
        IndexWriterConfig cfg = new IndexWriterConfig(analyzer(nativeAnalysis));
        cfg.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
        cfg.setSimilarity(similarity(a));
        cfg.setRAMBufferSizeMB(Double.parseDouble(need(a, "ram-mb")));
        FieldType flat = new FieldType();
        flat.setIndexOptions(IndexOptions.DOCS_AND_FREQS); // no positions: heddle keeps none
        flat.setTokenized(true);
        flat.setOmitNorms(false);
        flat.freeze();
        long count = 0;
        try (MMapDirectory directory = new MMapDirectory(dir);
                IndexWriter writer = new IndexWriter(directory, cfg)) {
            // One reader (this thread) and `threads` indexing threads, each adding whole
            // batches: IndexWriter gives every adding thread its own in-memory segment.
            BlockingQueue<List<String[]>> queue = new ArrayBlockingQueue<>(threads * 4);
            AtomicReference<Throwable> error = new AtomicReference<>();
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Thread w = new Thread(() -> {
                    try {
                        while (true) {
                            List<String[]> batch = queue.take();
                            if (batch.isEmpty()) {
                                return;
                            }
                            for (String[] d : batch) {
                                Document doc = new Document();
                                doc.add(new StoredField("id", d[0]));
                                doc.add(new StoredField("title", d[1]));
                                doc.add(new Field(FLAT, d[2], flat));
                                writer.addDocument(doc);
                            }
                        }
                    } catch (Throwable e) {
                        error.compareAndSet(null, e);
                    }
                });
                w.start();
                workers.add(w);
            }
            com.fasterxml.jackson.databind.ObjectMapper json =
                    new com.fasterxml.jackson.databind.ObjectMapper();
            try (BufferedReader in = Files.newBufferedReader(source, StandardCharsets.UTF_8)) {
                List<String[]> batch = new ArrayList<>(256);
                String line;
                long lineNo = 0;
                while ((line = in.readLine()) != null) {
                    lineNo++;
                    if (nativeAnalysis) {
                        // A BEIR document: the text Anserini's BeirFlatCollection indexes.
                        if (line.isBlank()) {
                            continue;
                        }
                        com.fasterxml.jackson.databind.JsonNode d = json.readTree(line);
                        String title = d.path("title").asText("");
                        batch.add(new String[] {d.path("_id").asText(), title,
                                title + " " + d.path("text").asText("")});
                    } else {
                        String[] f = line.split("\t", -1);
                        if (f.length != 3) {
                            fail(source + ":" + lineNo + ": expected id TAB title TAB tokens, found "
                                    + f.length + " fields");
                        }
                        batch.add(new String[] {unescape(f[0]), unescape(f[1]), f[2]});
                    }
                    count++;
                    if (batch.size() == 256) {
                        putChecked(queue, batch, error);
                        batch = new ArrayList<>(256);
                    }
                }
                if (!batch.isEmpty()) {
                    putChecked(queue, batch, error);
                }
            }
            for (int t = 0; t < threads; t++) {
                queue.put(List.of());
            }
            for (Thread w : workers) {
                w.join();
            }
            if (error.get() != null) {
                throw new RuntimeException("indexing failed", error.get());
            }
            long added = System.nanoTime();
            writer.commit();
            long committed = System.nanoTime();
            int flushed = SegmentInfos.readLatestCommit(directory).size();
            if (segments > 0 && flushed > segments) {
                writer.forceMerge(segments);
                writer.commit();
            }
            long done = System.nanoTime();
            int finalSegments = SegmentInfos.readLatestCommit(directory).size();
            writer.close();
            double seconds = (System.nanoTime() - started) / 1e9;
            System.out.println("{\"docs\":" + count
                    + ",\"seconds\":" + seconds
                    + ",\"bytes\":" + dirBytes(dir)
                    + ",\"segments\":" + finalSegments
                    + ",\"flushed_segments\":" + flushed
                    + ",\"add_seconds\":" + (added - started) / 1e9
                    + ",\"commit_seconds\":" + (committed - added) / 1e9
                    + ",\"merge_seconds\":" + (done - committed) / 1e9
                    + ",\"lucene\":\"" + Version.LATEST + "\"}");
        }
    }

    static void putChecked(BlockingQueue<List<String[]>> q, List<String[]> batch,
            AtomicReference<Throwable> error) throws InterruptedException {
        while (!q.offer(batch, 100, TimeUnit.MILLISECONDS)) {
            if (error.get() != null) {
                throw new RuntimeException("indexing failed", error.get());
            }
        }
    }

    static long dirBytes(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        }
    }

    // ---- serve ----

    /** The longest stop-the-world collection since the child started, in ms. */
    static final AtomicLong LONGEST_COLLECTION_MS = new AtomicLong();

    /**
     * Listens to every collector that pauses the application and keeps the longest
     * collection. Collectors named "Concurrent" (G1's concurrent cycle from JDK 20, ZGC's
     * and Shenandoah's cycles) run beside the application: their duration is not a pause.
     * On JDK 17's G1 the beans are "G1 Young Generation" and "G1 Old Generation", both
     * stop-the-world, so the figure is the longest pause.
     */
    static void watchCollections() {
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc.getName().contains("Concurrent") || gc.getName().contains("Cycles")) {
                continue;
            }
            if (gc instanceof NotificationEmitter emitter) {
                emitter.addNotificationListener((n, hb) -> {
                    if (GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION
                            .equals(n.getType())) {
                        long ms = GarbageCollectionNotificationInfo
                                .from((CompositeData) n.getUserData()).getGcInfo().getDuration();
                        LONGEST_COLLECTION_MS.accumulateAndGet(ms, Math::max);
                    }
                }, null, null);
            }
        }
    }

    static void serve(Map<String, String> a) throws Exception {
        watchCollections();
        Path dir = Paths.get(need(a, "index"));
        int threads = Math.max(1, Integer.parseInt(need(a, "threads")));
        // Native: each query's text through EnglishAnalyzer (thread-safe: each thread
        // reuses its own token stream), inside the timed service.
        org.apache.lucene.analysis.Analyzer english =
                isNative(a) ? new org.apache.lucene.analysis.en.EnglishAnalyzer() : null;
        long t0 = System.nanoTime();
        MMapDirectory directory = new MMapDirectory(dir);
        DirectoryReader reader = DirectoryReader.open(directory);
        IndexSearcher searcher = new IndexSearcher(reader);
        searcher.setSimilarity(similarity(a));
        long openNs = System.nanoTime() - t0;
        Writer out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8),
                1 << 16);
        synchronized (out) {
            out.write("ready\tlucene\t" + Version.LATEST + "\t" + reader.numDocs() + "\t" + openNs
                    + "\n");
            out.flush();
        }
        // As many searching threads as the instrument has workers: at most that many
        // requests are ever in flight, as in-process.
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8),
                1 << 16);
        String line;
        while ((line = in.readLine()) != null) {
            final String request = line;
            pool.execute(() -> {
                String answer;
                String id = request;
                int tab = request.indexOf('\t');
                if (tab >= 0) {
                    id = request.substring(0, tab);
                }
                try {
                    answer = answer(searcher, reader, cpu, english, request);
                } catch (Throwable e) {
                    answer = id + "\terror\t" + escape(String.valueOf(e));
                }
                try {
                    synchronized (out) {
                        out.write(answer);
                        out.write('\n');
                        out.flush();
                    }
                } catch (IOException e) {
                    System.exit(3); // the parent is gone
                }
            });
        }
        pool.shutdown();
        pool.awaitTermination(1, TimeUnit.MINUTES);
        reader.close();
        directory.close();
    }

    /// `english` is null in matched analysis (the query is heddle's tokens).
    static String answer(IndexSearcher searcher, DirectoryReader reader, ThreadMXBean cpu,
            org.apache.lucene.analysis.Analyzer english, String request) throws IOException {
        String[] f = request.split("\t", -1);
        if (f.length < 2) {
            throw new IllegalArgumentException("a request needs an id and an operation: " + request);
        }
        String id = f[0];
        switch (f[1]) {
            case "search": {
                if (f.length != 4) {
                    throw new IllegalArgumentException("search takes k and a query");
                }
                long wall = System.nanoTime();
                long cpu0 = cpu.getCurrentThreadCpuTime();
                int k = Integer.parseInt(f[2]);
                StringBuilder sb = new StringBuilder(64 + 32 * k);
                sb.append(id).append("\thits\t");
                List<String> hits = new ArrayList<>();
                if (k > 0) {
                    String q = unescape(f[3]);
                    List<String> tokens = english == null ? split(q) : analyse(english, q);
                    TopDocs top = searcher.search(query(tokens), k);
                    StoredFields stored = searcher.storedFields();
                    for (ScoreDoc sd : top.scoreDocs) {
                        Document d = stored.document(sd.doc);
                        d.get("title"); // read as heddle and tantivy read it for each hit
                        hits.add(sd.score + " " + escape(d.get("id")));
                    }
                }
                long service = System.nanoTime() - wall;
                long cpuNs = cpu.getCurrentThreadCpuTime() - cpu0;
                sb.append(service).append('\t').append(cpuNs);
                for (String h : hits) {
                    sb.append('\t').append(h);
                }
                return sb.toString();
            }
            case "stats": {
                // What BM25 reads: docCount, maxDoc, sumTotalTermFreq, each term's df.
                CollectionStatistics cs = searcher.collectionStatistics(FLAT);
                StringBuilder sb = new StringBuilder();
                sb.append(id).append("\tstats\t");
                sb.append(cs == null ? 0 : cs.docCount()).append('\t').append(reader.maxDoc())
                        .append('\t').append(cs == null ? 0 : cs.sumTotalTermFreq());
                if (f.length > 2 && !f[2].isEmpty()) {
                    for (String t : f[2].split(" ")) {
                        sb.append('\t').append(reader.docFreq(new Term(FLAT, t)));
                    }
                }
                return sb.toString();
            }
            case "memory": {
                MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
                long gcCount = 0;
                long gcMillis = 0;
                for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
                    gcCount += Math.max(0, gc.getCollectionCount());
                    gcMillis += Math.max(0, gc.getCollectionTime());
                }
                return id + "\tmemory\t" + heap.getUsed() + "\t" + heap.getCommitted() + "\t"
                        + gcCount + "\t" + gcMillis + "\t" + LONGEST_COLLECTION_MS.get();
            }
            default:
                throw new IllegalArgumentException("unknown operation " + f[1]);
        }
    }

    // ---- quality ----

    // Anserini's BM25 baseline for BEIR, in Lucene's public API: its DefaultEnglishAnalyzer
    // is the chain of Lucene's EnglishAnalyzer (StandardTokenizer, EnglishPossessiveFilter,
    // LowerCaseFilter, StopFilter with Lucene's 33 English stop words, PorterStemFilter);
    // BeirFlatCollection indexes title + " " + text as one field; BagOfWordsQueryGenerator
    // makes one SHOULD term clause per distinct query token, boosted by its count
    // (query() below); -removeQuery drops the query's own id from its hits.
    static void quality(Map<String, String> a) throws Exception {
        Path corpus = Paths.get(need(a, "corpus"));
        Path dir = Paths.get(need(a, "index"));
        int hits = Integer.parseInt(a.getOrDefault("hits", "1000"));
        com.fasterxml.jackson.databind.ObjectMapper json =
                new com.fasterxml.jackson.databind.ObjectMapper();
        org.apache.lucene.analysis.Analyzer english =
                new org.apache.lucene.analysis.en.EnglishAnalyzer();
        IndexWriterConfig cfg = new IndexWriterConfig(english);
        cfg.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
        cfg.setSimilarity(similarity(a));
        FieldType contents = new FieldType();
        contents.setIndexOptions(IndexOptions.DOCS_AND_FREQS);
        contents.setTokenized(true);
        contents.freeze();
        long docs = 0;
        long t0 = System.nanoTime();
        try (MMapDirectory directory = new MMapDirectory(dir);
                IndexWriter writer = new IndexWriter(directory, cfg);
                BufferedReader in = Files.newBufferedReader(corpus, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                com.fasterxml.jackson.databind.JsonNode d = json.readTree(line);
                Document doc = new Document();
                doc.add(new StoredField("id", d.path("_id").asText()));
                doc.add(new Field(FLAT, d.path("title").asText("") + " " + d.path("text").asText(""),
                        contents));
                writer.addDocument(doc);
                docs++;
            }
            writer.commit();
        }
        // The judged queries: those of the qrels (a BEIR qrels .tsv with its header line).
        java.util.Set<String> judged = new java.util.HashSet<>();
        try (BufferedReader in = Files.newBufferedReader(Paths.get(need(a, "qrels")),
                StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                String[] f = line.split("\t");
                if (f.length >= 3 && !f[0].equals("query-id")) {
                    judged.add(f[0]);
                }
            }
        }
        long queries = 0;
        long totalTokens;
        try (DirectoryReader reader = DirectoryReader.open(new MMapDirectory(dir));
                BufferedReader in = Files.newBufferedReader(Paths.get(need(a, "queries")),
                        StandardCharsets.UTF_8);
                Writer out = Files.newBufferedWriter(Paths.get(need(a, "out")),
                        StandardCharsets.UTF_8)) {
            IndexSearcher searcher = new IndexSearcher(reader);
            searcher.setSimilarity(similarity(a));
            StoredFields stored = searcher.storedFields();
            totalTokens = searcher.collectionStatistics(FLAT).sumTotalTermFreq();
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                com.fasterxml.jackson.databind.JsonNode q = json.readTree(line);
                String qid = q.path("_id").asText();
                if (!judged.contains(qid)) {
                    continue;
                }
                queries++;
                List<String> tokens = analyse(english, q.path("text").asText(""));
                TopDocs top = searcher.search(query(tokens), hits);
                int rank = 0;
                for (ScoreDoc sd : top.scoreDocs) {
                    String id = stored.document(sd.doc).get("id");
                    if (id.equals(qid)) {
                        continue;
                    }
                    rank++;
                    out.write(qid + " Q0 " + id + " " + rank + " " + sd.score + " lucene\n");
                }
            }
        }
        System.out.println("{\"docs\":" + docs + ",\"queries\":" + queries
                + ",\"total_tokens\":" + totalTokens
                + ",\"seconds\":" + (System.nanoTime() - t0) / 1e9
                + ",\"lucene\":\"" + Version.LATEST + "\"}");
    }

    /// The tokens `analyzer` makes of `text` in the flat field.
    static List<String> analyse(org.apache.lucene.analysis.Analyzer analyzer, String text)
            throws IOException {
        List<String> tokens = new ArrayList<>();
        try (org.apache.lucene.analysis.TokenStream ts = analyzer.tokenStream(FLAT, text)) {
            org.apache.lucene.analysis.tokenattributes.CharTermAttribute term =
                    ts.addAttribute(org.apache.lucene.analysis.tokenattributes.CharTermAttribute.class);
            ts.reset();
            while (ts.incrementToken()) {
                tokens.add(term.toString());
            }
            ts.end();
        }
        return tokens;
    }

    /// Pre-analysed tokens, space-separated (a token holds no whitespace).
    static List<String> split(String tokens) {
        List<String> out = new ArrayList<>();
        for (String t : tokens.split(" ")) {
            if (!t.isEmpty()) {
                out.add(t);
            }
        }
        return out;
    }

    /// One SHOULD TermQuery per distinct token, boosted by its count in the query (heddle
    /// weighs a repeated word count × idf; a boost folds into the term's weight).
    static Query query(List<String> tokens) {
        Map<String, Integer> counts = new TreeMap<>();
        for (String t : tokens) {
            counts.merge(t, 1, Integer::sum);
        }
        BooleanQuery.Builder b = new BooleanQuery.Builder();
        for (Map.Entry<String, Integer> e : counts.entrySet()) {
            Query q = new TermQuery(new Term(FLAT, e.getKey()));
            if (e.getValue() > 1) {
                q = new BoostQuery(q, e.getValue());
            }
            b.add(q, BooleanClause.Occur.SHOULD);
        }
        return b.build();
    }

    // ---- shared ----

    /// --analysis: matched (the default) or native; anything else is refused.
    static boolean isNative(Map<String, String> a) {
        String v = a.getOrDefault("analysis", "matched");
        if (!v.equals("matched") && !v.equals("native")) {
            fail("--analysis takes matched or native, not " + v);
        }
        return v.equals("native");
    }

    /// How the flat field is analysed: heddle's pre-analysed tokens split on whitespace
    /// (matched), or Lucene's EnglishAnalyzer (native).
    static org.apache.lucene.analysis.Analyzer analyzer(boolean nativeAnalysis) {
        return nativeAnalysis ? new org.apache.lucene.analysis.en.EnglishAnalyzer()
                : new WhitespaceAnalyzer();
    }

    static BM25Similarity similarity(Map<String, String> a) {
        return new BM25Similarity(Float.parseFloat(need(a, "k1")), Float.parseFloat(need(a, "b")));
    }

    /// Tab, newline, carriage return and backslash as \t \n \r \\ (bench/src/protocol.rs).
    static String escape(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\\' -> sb.append("\\\\");
                case '\t' -> sb.append("\\t");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                default -> sb.append(c);
            }
        }
        return sb.toString();
    }

    static String unescape(String s) {
        if (s.indexOf('\\') < 0) {
            return s;
        }
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char n = s.charAt(++i);
                sb.append(switch (n) {
                    case 't' -> '\t';
                    case 'n' -> '\n';
                    case 'r' -> '\r';
                    default -> n;
                });
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    static Map<String, String> flags(String[] argv) {
        Map<String, String> m = new HashMap<>();
        for (int i = 1; i < argv.length; i += 2) {
            if (!argv[i].startsWith("--") || i + 1 >= argv.length) {
                fail("expected --flag value pairs, found " + argv[i]);
            }
            m.put(argv[i].substring(2), argv[i + 1]);
        }
        return m;
    }

    static String need(Map<String, String> a, String k) {
        String v = a.get(k);
        if (v == null) {
            fail("missing --" + k);
        }
        return v;
    }

    static void fail(String message) {
        System.err.println("HeddleLucene: error: " + message);
        System.exit(2);
    }
}
