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
        .executable(name: "magpie", targets: ["MagpieCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
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
            name: "MagpieImage",
            dependencies: ["MagpieSupport", "CImageShims", "CImageKernels", "CJPEG", "CPNG", "CGIF", "CWebP"],
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "MagpieCLI",
            dependencies: [
                "MagpieImage", "MagpieCache", "MagpieSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings),

        .target(
            name: "MagpieTestSupport",
            dependencies: ["MagpieImage", "CDeflate"],
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
            name: "MagpieCLITests",
            dependencies: ["MagpieTestSupport", "MagpieCLI", "MagpieCache"],
            swiftSettings: swiftSettings),
    ]
)
