public import Foundation
public import Magpie
public import MagpieImage

/// How a new image should appear; a hint the target interprets.
public enum ImageTransition: Sendable, Equatable {
    /// Replace at once.
    case none
    /// Cross-fade over this long.
    case fade(Duration)
}

/// Anything that shows an image: a view, a layer, a menu item, a test double. Called on the
/// main actor.
public protocol ImageDisplaying: AnyObject {
    /// Shows `image` (nil clears it) with `transition` as a hint.
    @MainActor func display(_ image: Image?, transition: ImageTransition)
}

/// A control state with its own image (AFNetworking's button states). Any other state falls
/// back to ``normal``.
public enum ControlState: String, Sendable, Hashable, CaseIterable {
    case normal, highlighted, selected, disabled

    /// The state named `name`, or ``normal`` for any other name.
    public init(named name: String) {
        self = ControlState(rawValue: name) ?? .normal
    }
}

/// Options of a binding.
public struct BindingOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Do not show (or clear to) the placeholder while loading; the old image stays.
    public static let ignorePlaceholder = BindingOptions(rawValue: 1 << 0)
    /// Do not display the result; only the completion sees it.
    public static let avoidSetImage = BindingOptions(rawValue: 1 << 1)
}

/// Binds image loads to display targets (UIImageView+WebCache, UIButton+AFNetworking) without
/// associated objects: a registry keyed by object identity that forgets targets once they
/// are deallocated.
///
/// One load per target and state: binding a new URL cancels the target's previous load for
/// that state; binding the URL it is already loading keeps the running load; a late result
/// for an old URL is never shown. Callbacks run on the main actor.
///
/// ```swift
/// ImageBinder.shared.setImage(with: url, on: cell.thumbnail, placeholder: grey, transition: .fade(.milliseconds(200)))
/// ```
@MainActor
public final class ImageBinder {
    /// A binder on ``ImagePipeline/shared``.
    public static let shared = ImageBinder(pipeline: .shared)

    private struct Key: Hashable {
        var object: ObjectIdentifier
        var state: ControlState
    }

    private struct Binding {
        weak var target: (any ImageDisplaying)?
        var url: URL?
        var task: ImageTask?
        var generation: Int
        /// The final image was shown: a preview still on its way to the main actor is dropped.
        var finished = false
    }

    /// The pipeline loads go through.
    public let pipeline: ImagePipeline
    private var bindings: [Key: Binding] = [:]
    private var generation = 0

    /// A binder on `pipeline`.
    public init(pipeline: ImagePipeline) {
        self.pipeline = pipeline
    }

    /// Loads `url` into `target` for `state`.
    ///
    /// - Cancels the target's previous load for that state, unless it is loading this URL.
    /// - Shows `placeholder` (nil clears the old image) unless ``BindingOptions/ignorePlaceholder``.
    /// - A memory hit is shown before this returns; otherwise the image is shown when it
    ///   arrives (previews too, with ``ImageOptions/progressive``), with `transition`, unless
    ///   ``BindingOptions/avoidSetImage``.
    /// - A nil URL cancels the previous load and shows the placeholder.
    ///
    /// `completion` runs on the main actor, once, for loads that start; not for a rebinding
    /// that keeps the running load.
    @discardableResult
    public func setImage(
        with url: URL?, on target: some ImageDisplaying, for state: ControlState = .normal, placeholder: Image? = nil,
        processors: [any ImageProcessing] = [], options: ImageOptions = [], binding: BindingOptions = [],
        transition: ImageTransition = .none, completion: (@MainActor (ImageTaskResult) -> Void)? = nil
    ) -> ImageTask? {
        purge()
        let key = Key(object: ObjectIdentifier(target), state: state)
        if let existing = bindings[key], existing.target === target, let url, existing.url == url,
           let task = existing.task, task.state == .running {
            return task  // already loading this URL
        }
        bindings[key]?.task?.cancel()
        generation += 1
        let generation = self.generation
        bindings[key] = Binding(target: target, url: url, task: nil, generation: generation)

        guard let url else {
            if !binding.contains(.ignorePlaceholder) { target.display(placeholder, transition: .none) }
            completion?(ImageTaskResult(stage: .finished, error: nil))
            return nil
        }
        let request = ImageRequest(url: url, processors: processors, options: options)
        if let image = pipeline.memoryHit(request) {
            if !binding.contains(.avoidSetImage) { target.display(image, transition: .none) }
            completion?(ImageTaskResult(stage: .finished, image: image, url: url, source: .memoryFast))
            return nil
        }
        if !binding.contains(.ignorePlaceholder) { target.display(placeholder, transition: .none) }

        let task = pipeline.loadImage(with: request) { [weak self] result in
            Task { @MainActor in
                self?.deliver(result, key: key, generation: generation, binding: binding, transition: transition, completion: completion)
            }
        }
        if bindings[key]?.generation == generation, task.state == .running {
            bindings[key]?.task = task
        }
        return task
    }

    /// Shows a result if its binding is still the target's current one (a late result for an
    /// old URL is dropped); the completion sees every end.
    private func deliver(
        _ result: ImageTaskResult, key: Key, generation: Int, binding: BindingOptions,
        transition: ImageTransition, completion: (@MainActor (ImageTaskResult) -> Void)?
    ) {
        let current = bindings[key].flatMap { $0.generation == generation ? $0 : nil }
        let target = current?.target
        switch result.stage {
        case .progress:
            if let target, current?.finished == false, !binding.contains(.avoidSetImage), let image = result.image {
                target.display(image, transition: .none)
            }
        case .finished:
            if let target {
                if !binding.contains(.avoidSetImage), let image = result.image { target.display(image, transition: transition) }
                bindings[key]?.task = nil
                bindings[key]?.finished = true
            }
            completion?(result)
        case .cancelled:
            completion?(result)
        }
    }

    /// Cancels the load of `target` for `state` and forgets the binding.
    public func cancel(for target: some ImageDisplaying, state: ControlState = .normal) {
        let key = Key(object: ObjectIdentifier(target), state: state)
        bindings[key]?.task?.cancel()
        bindings[key] = nil
    }

    /// The URL bound to `target` for `state`.
    public func url(for target: some ImageDisplaying, state: ControlState = .normal) -> URL? {
        let key = Key(object: ObjectIdentifier(target), state: state)
        guard let binding = bindings[key], binding.target === target else { return nil }
        return binding.url
    }

    /// Bindings held now (targets still alive).
    public var bindingCount: Int {
        purge()
        return bindings.count
    }

    /// Forgets bindings whose targets are gone, cancelling their loads.
    public func purge() {
        for (key, binding) in bindings where binding.target == nil {
            binding.task?.cancel()
            bindings[key] = nil
        }
    }
}
