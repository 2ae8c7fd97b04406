// swift-tools-version: 6.1
import PackageDescription

/// Settings every Swift target shares: Swift 6 language mode comes from the tools version;
/// these upcoming features keep the API surface honest.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Magpie",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "MagpieImage", targets: ["MagpieImage"]),
        .library(name: "MagpieCache", targets: ["MagpieCache"]),
        .library(name: "MagpieNetworking", targets: ["MagpieNetworking"]),
        .library(name: "Magpie", targets: ["Magpie"]),
        .library(name: "MagpieBinding", targets: ["MagpieBinding"]),
        .executable(name: "magpie", targets: ["MagpieCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Hummingbird's two default traits make SwiftPM rebuild it on about half of all builds.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    ],
    targets: [
        // System C libraries, installed by scripts/install-system-deps.sh.
        .systemLibrary(
            name: "CJPEG", pkgConfig: "libjpeg",
            providers: [.apt(["libjpeg62-turbo-dev"]), .brew(["jpeg-turbo"])]),
        .systemLibrary(
            name: "CPNG", pkgConfig: "libpng16",
            providers: [.apt(["libpng-dev"]), .brew(["libpng"])]),
        .systemLibrary(
            name: "CGIF", pkgConfig: "libgif",
            providers: [.apt(["libgif-dev"]), .brew(["giflib"])]),
        .systemLibrary(
            name: "CWebP", pkgConfig: "libwebpmux",
            providers: [.apt(["libwebp-dev"]), .brew(["webp"])]),
        .systemLibrary(
            name: "CSQLite3", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(
            name: "CDeflate", pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"]), .brew(["libdeflate"])]),

        // The one C target that calls setjmp: libjpeg and libpng report errors by longjmp,
        // and no longjmp may cross a Swift frame.
        .target(name: "CImageShims", dependencies: ["CJPEG", "CPNG", "CDeflate"]),

        // The inner loops of image processing (resampling, blur), plain C for tight code.
        .target(name: "CImageKernels"),

        .target(name: "MagpieSupport", swiftSettings: swiftSettings),
        .target(name: "MagpieCache", dependencies: ["MagpieSupport", "CSQLite3"], swiftSettings: swiftSettings),
        .target(
            name: "MagpieNetworking",
            dependencies: [
                "MagpieCache", "MagpieSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings),
        .target(
            name: "MagpieImage",
            dependencies: ["MagpieSupport", "CImageShims", "CImageKernels", "CJPEG", "CPNG", "CGIF", "CWebP"],
            swiftSettings: swiftSettings),
        .target(
            name: "Magpie",
            dependencies: [
                "MagpieImage", "MagpieCache", "MagpieNetworking", "MagpieSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings),
        .target(
            name: "MagpieBinding",
            dependencies: ["Magpie", "MagpieImage", "MagpieSupport"],
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "MagpieCLI",
            dependencies: [
                "Magpie", "MagpieImage", "MagpieCache", "MagpieNetworking", "MagpieSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings),

        .target(
            name: "MagpieTestSupport",
            dependencies: [
                "MagpieImage", "CDeflate",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/MagpieTestSupport",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "MagpieImageTests",
            dependencies: ["MagpieImage", "MagpieSupport", "MagpieTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "MagpieCacheTests",
            dependencies: ["MagpieCache", "MagpieSupport", "MagpieTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "MagpieNetworkingTests",
            dependencies: ["MagpieNetworking", "MagpieCache", "MagpieSupport", "MagpieTestSupport",
                           .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "MagpieTests",
            dependencies: ["Magpie", "MagpieImage", "MagpieCache", "MagpieNetworking", "MagpieSupport", "MagpieTestSupport",
                           .product(name: "MetricsTestKit", package: "swift-metrics")],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "MagpieBindingTests",
            dependencies: ["MagpieBinding", "Magpie", "MagpieImage", "MagpieSupport", "MagpieTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "MagpieCLITests",
            dependencies: ["MagpieTestSupport", "MagpieCLI", "MagpieCache", "MagpieImage",
                           .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings),
    ]
)
